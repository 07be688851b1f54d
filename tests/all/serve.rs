//! `dedupsim serve` driven by a raw-socket NBD client: data read back
//! exactly, bad clients answered with protocol errors (never a crash),
//! concurrent clients, the report and the recording (replayed with `run`).
//! Real clients (qemu-io, qemu-img, fio, nbdfuse + fuse2fs) are exercised by
//! `scripts/serve-clients.sh`, which `.ci/run` runs.

use crate::support::cargo_bin;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const IHAVEOPT: u64 = 0x4948_4156_454f_5054;
const REQ: u32 = 0x2560_9513;

/// `dedupsim serve --preset tiny --unix SOCK EXTRA...` with standard input
/// closed and standard error piped (the "listening" line, or the refusal).
fn serve_command(sock: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(cargo_bin("dedupsim"));
    c.args(["serve", "--preset", "tiny", "--unix"]).arg(sock).args(extra).stdin(Stdio::null()).stderr(Stdio::piped());
    c
}

/// A running server on a Unix socket in `dir`.
struct Server {
    child: Child,
    sock: PathBuf,
    /// The "listening" line the server printed.
    listening: String,
}

impl Server {
    fn start(dir: &Path, extra: &[&str]) -> Server {
        let sock = dir.join("nbd.sock");
        let mut child =
            serve_command(&sock, &[&["--status-every", "0"], extra].concat()).stdout(Stdio::piped()).spawn().unwrap();
        // Wait for the "listening" line.
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        err.read_line(&mut line).unwrap();
        assert!(line.contains("listening on nbd+unix"), "{line}");
        std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = err.read_to_string(&mut rest);
            eprint!("{rest}");
        });
        Server { child, sock, listening: line }
    }

    /// Waits for the server to exit by itself; its stdout.
    fn wait(mut self) -> String {
        let t = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                let mut out = String::new();
                self.child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
                assert!(st.success(), "server failed: {st}\n{out}");
                return out;
            }
            assert!(t.elapsed() < Duration::from_secs(60), "server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Client {
    s: UnixStream,
}

impl Client {
    /// Connects and negotiates with NBD_OPT_GO; the export size.
    fn connect(sock: &Path) -> (Client, u64) {
        let (c, size, _) = Client::connect_info(sock);
        (c, size)
    }

    /// [`Client::connect`], asking for the block size constraints too:
    /// (minimum, preferred, maximum).
    fn connect_info(sock: &Path) -> (Client, u64, [u32; 3]) {
        let mut s = UnixStream::connect(sock).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut hello = [0u8; 18];
        s.read_exact(&mut hello).unwrap();
        assert_eq!(&hello[..8], b"NBDMAGIC");
        s.write_all(&3u32.to_be_bytes()).unwrap();
        let mut c = Client { s };
        let mut data = 0u32.to_be_bytes().to_vec();
        data.extend_from_slice(&1u16.to_be_bytes());
        data.extend_from_slice(&3u16.to_be_bytes()); // NBD_INFO_BLOCK_SIZE
        c.option(7, &data);
        let (mut size, mut blocks) = (0, [0u32; 3]);
        loop {
            let (kind, d) = c.option_reply();
            if kind == 3 && d[..2] == [0, 0] {
                size = u64::from_be_bytes(d[2..10].try_into().unwrap());
            }
            if kind == 3 && d[..2] == [0, 3] {
                for (k, b) in blocks.iter_mut().enumerate() {
                    *b = u32::from_be_bytes(d[2 + 4 * k..6 + 4 * k].try_into().unwrap());
                }
            }
            if kind == 1 {
                break;
            }
            assert!(kind < 1 << 31, "error reply {kind:#x}");
        }
        (c, size, blocks)
    }

    fn option(&mut self, kind: u32, data: &[u8]) {
        let mut m = IHAVEOPT.to_be_bytes().to_vec();
        m.extend_from_slice(&kind.to_be_bytes());
        m.extend_from_slice(&(data.len() as u32).to_be_bytes());
        m.extend_from_slice(data);
        self.s.write_all(&m).unwrap();
    }

    fn option_reply(&mut self) -> (u32, Vec<u8>) {
        let mut h = [0u8; 20];
        self.s.read_exact(&mut h).unwrap();
        let kind = u32::from_be_bytes(h[12..16].try_into().unwrap());
        let mut d = vec![0; u32::from_be_bytes(h[16..20].try_into().unwrap()) as usize];
        self.s.read_exact(&mut d).unwrap();
        (kind, d)
    }

    fn send(&mut self, kind: u16, handle: u64, offset: u64, len: u32, payload: &[u8]) {
        let mut m = REQ.to_be_bytes().to_vec();
        m.extend_from_slice(&0u16.to_be_bytes());
        m.extend_from_slice(&kind.to_be_bytes());
        m.extend_from_slice(&handle.to_be_bytes());
        m.extend_from_slice(&offset.to_be_bytes());
        m.extend_from_slice(&len.to_be_bytes());
        m.extend_from_slice(payload);
        self.s.write_all(&m).unwrap();
    }

    /// (error, handle) of the next simple reply.
    fn reply(&mut self) -> (u32, u64) {
        let mut h = [0u8; 16];
        self.s.read_exact(&mut h).unwrap();
        assert_eq!(u32::from_be_bytes(h[..4].try_into().unwrap()), 0x6744_6698);
        (u32::from_be_bytes(h[4..8].try_into().unwrap()), u64::from_be_bytes(h[8..16].try_into().unwrap()))
    }

    fn write(&mut self, offset: u64, data: &[u8]) -> u32 {
        self.send(1, 9, offset, data.len() as u32, data);
        self.reply().0
    }

    fn read(&mut self, offset: u64, len: u32) -> Result<Vec<u8>, u32> {
        self.send(0, 8, offset, len, &[]);
        match self.reply().0 {
            0 => {
                let mut d = vec![0; len as usize];
                self.s.read_exact(&mut d).unwrap();
                Ok(d)
            }
            e => Err(e),
        }
    }

    fn disconnect(mut self) {
        self.send(2, 0, 0, 0, &[]);
    }
}

/// Deterministic page-ish content: `n` bytes from seed `k`.
fn bytes(k: u64, n: usize) -> Vec<u8> {
    let mut x = k.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

#[test]
fn data_reads_back_exactly_and_the_recording_replays() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.trace");
    let json = dir.path().join("serve.json");
    let srv =
        Server::start(dir.path(), &["--record", rec.to_str().unwrap(), "--json", json.to_str().unwrap(), "--check"]);
    let (mut c, size) = Client::connect(&srv.sock);
    assert_eq!(size, 192 * 4096, "tiny's logical capacity");
    let mut model = vec![0u8; size as usize];
    // Aligned, unaligned and duplicate writes; zeroes; a trim; reads of all.
    let mut put = |c: &mut Client, off: u64, d: &[u8]| {
        assert_eq!(c.write(off, d), 0);
        model[off as usize..off as usize + d.len()].copy_from_slice(d);
    };
    put(&mut c, 0, &bytes(1, 16384));
    put(&mut c, 65536, &bytes(1, 16384)); // a duplicate run
    put(&mut c, 5000, &bytes(2, 3000)); // sub-page, unaligned
    put(&mut c, 100 * 4096 - 7, &bytes(3, 9000)); // straddles pages
    put(&mut c, 20 * 4096, &bytes(1, 4096)[..].repeat(3)); // in-file duplicates
    c.send(6, 10, 4096 * 30, 8192, &[]); // WRITE_ZEROES
    assert_eq!(c.reply(), (0, 10));
    c.send(4, 11, 0, 4096, &[]); // TRIM of page 0
    assert_eq!(c.reply(), (0, 11));
    model[..4096].fill(0);
    c.send(3, 12, 0, 0, &[]); // FLUSH
    assert_eq!(c.reply(), (0, 12));
    for (off, len) in [(0u64, size as u32), (4999, 3002), (100 * 4096 - 8, 9002)] {
        let got = c.read(off, len).unwrap();
        assert!(got == model[off as usize..(off + u64::from(len)) as usize], "read at {off}+{len}");
    }
    // Out of range: EINVAL for a read, ENOSPC for a write; the connection lives on.
    assert_eq!(c.read(size - 10, 20), Err(22));
    assert_eq!(c.write(size, &[1, 2, 3]), 28);
    // Write zeroes is a write ("NBD_CMD_WRITE_ZEROES"); a trim past the end
    // is EINVAL ("Error values": "a read or trim request"; it was ENOSPC).
    c.send(6, 13, size - 4096, 8192, &[]);
    assert_eq!(c.reply(), (28, 13));
    c.send(4, 14, size - 4096, 8192, &[]);
    assert_eq!(c.reply(), (22, 14));
    assert_eq!(c.read(0, 4).unwrap(), model[..4].to_vec());
    c.disconnect();
    let out = srv.wait();
    assert!(out.contains("serve: 1 connection(s)"), "{out}");
    // The report, and the recording replayed by `run` on the same device.
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let served = &j[0]["summary"];
    let replay = dir.path().join("replay.json");
    let o = Command::new(cargo_bin("dedupsim"))
        .args(["run", "--quiet", "--preset", "tiny", "-p", "dedup", "--set", "precondition.rule=\"none\""])
        .args(["--queue-depth", "1", "--trace"])
        .arg(&rec)
        .arg("--json")
        .arg(&replay)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&replay).unwrap()).unwrap();
    let replayed = &r[0]["summary"];
    for key in ["write_volume_pages", "dedup_rate_achieved"] {
        assert_eq!(served[key], replayed[key], "{key}: served {} vs replayed {}", served[key], replayed[key]);
    }
    assert!(served["dedup_rate_achieved"].as_f64().unwrap() > 0.2, "{served}");
}

#[test]
fn bad_clients_get_protocol_errors_and_the_server_survives() {
    let dir = tempfile::tempdir().unwrap();
    let srv = Server::start(dir.path(), &["--persist", "--max-block", "64KiB"]);
    let raw = || {
        let mut s = UnixStream::connect(&srv.sock).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut hello = [0u8; 18];
        s.read_exact(&mut hello).unwrap();
        s
    };
    // Unknown client flags: closed.
    let mut s = raw();
    s.write_all(&0x80u32.to_be_bytes()).unwrap();
    assert!(s.read(&mut [0u8; 1]).map_or(true, |n| n == 0));
    // Bad option magic: closed.
    let mut s = raw();
    s.write_all(&[0, 0, 0, 3]).unwrap();
    s.write_all(&[0xde; 16]).unwrap();
    assert!(s.read(&mut [0u8; 1]).map_or(true, |n| n == 0));
    // Unknown options get NBD_REP_ERR_UNSUP, an unknown export NBD_REP_ERR_UNKNOWN;
    // then GO works.
    let s = raw();
    let mut c = Client { s };
    c.s.write_all(&3u32.to_be_bytes()).unwrap();
    c.option(99, b"x");
    assert_eq!(c.option_reply().0, (1 << 31) | 1);
    let mut d = 4u32.to_be_bytes().to_vec();
    d.extend_from_slice(b"nope");
    d.extend_from_slice(&0u16.to_be_bytes());
    c.option(7, &d);
    assert_eq!(c.option_reply().0, (1 << 31) | 6);
    // A client gone mid-handshake.
    let mut s = raw();
    s.write_all(&[0, 0]).unwrap();
    drop(s);
    // Transmission: unknown command, oversized read and write, then bad magic.
    let (mut c, _) = Client::connect(&srv.sock);
    c.send(42, 1, 0, 0, &[]);
    assert_eq!(c.reply(), (22, 1));
    c.send(0, 2, 0, 1 << 20, &[]);
    assert_eq!(c.reply(), (22, 2));
    c.send(1, 3, 0, 128 * 1024, &vec![7; 128 * 1024]);
    assert_eq!(c.reply(), (22, 3));
    assert_eq!(c.write(0, &[5; 4096]), 0);
    c.s.write_all(&[0u8; 28]).unwrap();
    // Closed: end of stream, or a reset if the server dropped unread bytes.
    assert!(c.s.read(&mut [0u8; 1]).map_or(true, |n| n == 0), "bad request magic closes");
    // A client that disconnects mid-request (header, half a payload).
    let (mut c, _) = Client::connect(&srv.sock);
    let mut m = REQ.to_be_bytes().to_vec();
    m.extend_from_slice(&[0, 0, 0, 1]);
    m.extend_from_slice(&[0; 8]);
    m.extend_from_slice(&8192u64.to_be_bytes());
    m.extend_from_slice(&4096u32.to_be_bytes());
    m.extend_from_slice(&[1; 100]);
    c.s.write_all(&m).unwrap();
    drop(c);
    // Many clients at once, each on its own pages, pipelined (queue depth 8):
    // every acknowledged write reads back.
    let threads: Vec<_> = (0..6u64)
        .map(|t| {
            let sock = srv.sock.clone();
            std::thread::spawn(move || {
                let (mut c, _) = Client::connect(&sock);
                for round in 0..20u64 {
                    for k in 0..8u64 {
                        let page = 8 + t * 16 + (round + k) % 16;
                        c.send(1, k, page * 4096, 4096, &bytes(t * 1000 + round * 8 + k, 4096));
                    }
                    let mut acked = [false; 8];
                    for _ in 0..8 {
                        let (e, h) = c.reply();
                        assert_eq!(e, 0);
                        acked[h as usize] = true;
                    }
                    assert!(acked.iter().all(|&a| a));
                    for k in 0..8u64 {
                        let page = 8 + t * 16 + (round + k) % 16;
                        assert!(c.read(page * 4096, 4096).unwrap() == bytes(t * 1000 + round * 8 + k, 4096));
                    }
                }
                c.disconnect();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // The first good client's page survived everything.
    let (mut c, _) = Client::connect(&srv.sock);
    assert_eq!(c.read(0, 4096).unwrap(), vec![5; 4096]);
    c.disconnect();
    // SIGTERM ends a --persist server with its report.
    let pid = srv.child.id();
    assert!(Command::new("kill").arg(pid.to_string()).status().unwrap().success());
    let out = srv.wait();
    assert!(out.contains("connection(s)"), "{out}");
}

/// `serve --timeseries` records the served run's series like `run`'s: its
/// per-interval counts add up to the served report's, and `--plot` draws
/// the figures.
#[test]
fn serve_records_a_time_series_and_plots_it() {
    let dir = tempfile::tempdir().unwrap();
    let (ts, json, figs) = (dir.path().join("ts.csv"), dir.path().join("s.json"), dir.path().join("figs"));
    let srv = Server::start(
        dir.path(),
        &[
            "--timeseries",
            "100us",
            "--timeseries-out",
            ts.to_str().unwrap(),
            "--plot",
            figs.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let (mut c, _) = Client::connect(&srv.sock);
    for k in 0..40u64 {
        assert_eq!(c.write((k % 20) * 8192, &bytes(k % 7, 8192)), 0);
        c.read((k % 13) * 4096, 4096).unwrap();
    }
    c.disconnect();
    srv.wait();
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let counters = &j[0]["counters"];
    let text = std::fs::read_to_string(&ts).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no column {name}"));
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert!(rows.len() > 1, "a series of more than one interval: {text}");
    for key in ["reads", "writes", "dedup_pages"] {
        let sum: u64 = rows.iter().map(|r| r[col(key)].parse::<u64>().unwrap()).sum();
        assert_eq!(sum, counters[key].as_u64().unwrap(), "{key}");
    }
    assert!(counters["reads"].as_u64().unwrap() >= 40 && counters["dedup_pages"].as_u64().unwrap() > 0);
    for f in ["latency-over-time.png", "latency-cdf.png", "gc-over-time.png"] {
        assert!(figs.join(f).is_file(), "{f}");
    }
}

#[test]
fn bad_flags_are_refused_before_serving() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let o = Command::new(cargo_bin("dedupsim")).arg("serve").args(args).output().unwrap();
        assert!(!o.status.success(), "{args:?}");
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    assert!(run(&["--preset", "tiny", "--size", "1TiB"]).contains("at most the device's logical capacity"));
    assert!(run(&["--preset", "tiny", "--size", "4097"]).contains("multiple of the page size"));
    assert!(run(&["--clock", "wall"]).contains("unknown clock `wall`"));
    assert!(run(&["--hash", "md4"]).contains("unknown hash `md4`"));
    assert!(run(&["--policy", "nope"]).contains("unknown policy"));
    assert!(run(&["--preset", "tiny", "--timeseries", "1ms"]).contains("needs somewhere to go"));
    let existing = dir.path().join("x");
    std::fs::write(&existing, "keep").unwrap();
    assert!(run(&["--record", existing.to_str().unwrap()]).contains("never replaces a file"));
    assert!(run(&["--unix", existing.to_str().unwrap()]).contains("exists"));
    assert!(run(&["--preset", "tiny", "--listen", "nope"])
        .contains("--listen nope: cannot listen there: invalid socket address"));
    let sock = dir.path().join("no-such-dir").join("s");
    assert!(run(&["--preset", "tiny", "--unix", sock.to_str().unwrap()]).contains("--unix "));
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep");
}

/// Flags the server used to accept and then fail on, each refused at start
/// (before the "listening" line; reaching it fails the test at once, so a
/// regression cannot hang it waiting for a client).
#[test]
fn flags_that_would_fail_later_are_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("s");
    let refused = |args: &[&str]| {
        let mut child = serve_command(&sock, args).stdout(Stdio::null()).spawn().unwrap();
        let mut err = String::new();
        for line in BufReader::new(child.stderr.take().unwrap()).lines() {
            let line = line.unwrap();
            if line.contains("listening on") {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{args:?}: the server started ({line}); it should have refused");
            }
            err.push_str(&line);
            err.push('\n');
        }
        assert!(!child.wait().unwrap().success(), "{args:?}");
        err
    };
    // Not one page in memory and nowhere to spill: every write would fail
    // with ENOSPC.
    for m in ["0", "4095"] {
        let e = refused(&["--store-memory", m]);
        assert!(
            e.contains(&format!("--store-memory {m}: less than one page (4096 B)")) && e.contains("--store DIR"),
            "{e}"
        );
    }
    // A directory the spill file cannot be made in failed only at the
    // first spill (EIO to the client). /proc refuses new files, also to root.
    let e = refused(&["--store", "/proc"]);
    assert!(e.contains("--store /proc: the spill file cannot be made there"), "{e}");
    // A number of seconds too large for a Duration panicked once listening.
    let e = refused(&["--status-every", "1e300"]);
    assert!(e.contains("--status-every 1e300: must be a number of seconds"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    // FILE.partial, where the recording grows, is never overwritten (it was
    // truncated, and two servers recording to one FILE interleaved lines).
    let rec = dir.path().join("rec.trace");
    let partial = dir.path().join("rec.trace.partial");
    std::fs::write(&partial, "keep").unwrap();
    let e = refused(&["--record", rec.to_str().unwrap()]);
    assert!(e.contains("rec.trace.partial exists"), "{e}");
    assert_eq!(std::fs::read_to_string(&partial).unwrap(), "keep");
    // `-` is standard output elsewhere; the recording went to a file named `-`.
    let e = refused(&["--record", "-"]);
    assert!(e.contains("--record -: the recording cannot go to standard output"), "{e}");
}

/// An export under 1 MiB is named in KiB on the listening line (it said
/// "0 MiB export").
#[test]
fn a_small_export_is_named_in_kib() {
    let dir = tempfile::tempdir().unwrap();
    let srv = Server::start(dir.path(), &["--size", "512KiB"]);
    assert!(srv.listening.contains("(512 KiB export, preset tiny"), "{}", srv.listening);
}

/// With `--store DIR`, a `--store-memory` below one page is fine: every
/// page spills, and reads (and duplicates, verified from the file) come
/// back exactly.
#[test]
fn every_page_spills_with_no_store_memory() {
    let dir = tempfile::tempdir().unwrap();
    let spill = dir.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    let srv = Server::start(dir.path(), &["--store-memory", "0", "--store", spill.to_str().unwrap(), "--check"]);
    let (mut c, _) = Client::connect(&srv.sock);
    let d = bytes(3, 5 * 4096 + 77);
    assert_eq!(c.write(100, &d), 0);
    assert_eq!(c.write(40 * 4096 + 100, &d), 0); // the same pages: duplicates of spilled ones
    assert_eq!(c.write(2 * 4096 + 1, &[9; 10]), 0); // read-modify-write of a spilled page
    let mut want = d.clone();
    want[2 * 4096 + 1 - 100..2 * 4096 + 11 - 100].fill(9);
    assert!(c.read(100, d.len() as u32).unwrap() == want);
    assert!(c.read(40 * 4096 + 100, d.len() as u32).unwrap() == d);
    c.disconnect();
    let out = srv.wait();
    assert!(out.contains(" 0 in memory, "), "{out}");
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0, "the spill file is removed");
}

/// A client that pipelines more requests than the server keeps waiting
/// (`serve::MAX_WAITING`, 256) without reading replies: the server stops
/// reading its input and replies first, instead of holding every read's
/// data (1,000 reads of 32 MiB were 32 GiB). Seen in the recording: the
/// 257th read, sent with the others, arrives at the first reply's
/// simulated completion, after the 256 before it.
#[test]
fn a_client_that_never_reads_replies_cannot_make_the_server_hold_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let rec = dir.path().join("rec.trace");
    let srv = Server::start(dir.path(), &["--record", rec.to_str().unwrap()]);
    let (mut c, _) = Client::connect(&srv.sock);
    assert_eq!(c.write(0, &bytes(1, 65536)), 0);
    let mut m = Vec::new();
    for h in 0..257u64 {
        m.extend_from_slice(&REQ.to_be_bytes());
        m.extend_from_slice(&0u16.to_be_bytes());
        m.extend_from_slice(&0u16.to_be_bytes()); // READ
        m.extend_from_slice(&h.to_be_bytes());
        m.extend_from_slice(&0u64.to_be_bytes());
        m.extend_from_slice(&65536u32.to_be_bytes());
    }
    c.s.write_all(&m).unwrap(); // all 257 at once, before any reply is read
    for _ in 0..257 {
        assert_eq!(c.reply().0, 0);
        let mut d = vec![0; 65536];
        c.s.read_exact(&mut d).unwrap();
        assert!(d == bytes(1, 65536));
    }
    c.disconnect();
    srv.wait();
    let text = std::fs::read_to_string(&rec).unwrap();
    let reads: Vec<u64> = text
        .lines()
        .filter(|l| l.split(' ').nth(1) == Some("R"))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(reads.len(), 257);
    assert!(reads[..256].iter().all(|&t| t == reads[0]), "the first 256 arrive together");
    assert!(reads[256] > reads[0], "the 257th waits for a reply: {} vs {}", reads[256], reads[0]);
}

/// A page that is not a power of two (`geometry.page_size` may be any
/// multiple of 4 KiB) is still served: the preferred block size the
/// handshake advertises must be a power of two ("Block size constraints";
/// qemu refused the 12 KiB page's `12288`), and it divides the page.
/// Writes across its pages read back exactly.
#[test]
fn a_page_that_is_not_a_power_of_two_negotiates_and_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let srv = Server::start(dir.path(), &["--set", "geometry.page_size=12288", "--check"]);
    let (mut c, size, [min, preferred, max]) = Client::connect_info(&srv.sock);
    assert_eq!(size % 12288, 0);
    assert!(preferred.is_power_of_two() && preferred >= 512, "preferred block size {preferred}");
    assert!(min <= preferred && preferred <= max && 12288 % preferred == 0, "{min} {preferred} {max}");
    let d = bytes(7, 30000);
    assert_eq!(c.write(12288 - 5, &d), 0);
    assert!(c.read(12288 - 5, d.len() as u32).unwrap() == d);
    assert_eq!(c.read(0, 12288 - 5).unwrap(), vec![0; 12288 - 5]);
    c.disconnect();
    srv.wait();
}

#[test]
fn the_real_clock_holds_each_reply_until_its_simulated_completion() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("real.json");
    let srv = Server::start(dir.path(), &["--clock", "real", "--json", json.to_str().unwrap()]);
    let (mut c, _) = Client::connect(&srv.sock);
    assert_eq!(c.write(0, &bytes(5, 65536)), 0);
    let t = Instant::now();
    assert!(c.read(0, 65536).unwrap() == bytes(5, 65536));
    let waited = t.elapsed();
    c.disconnect();
    srv.wait();
    let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let read_us = j[0]["summary"]["read"]["mean_us"].as_f64().unwrap();
    assert!(read_us > 100.0, "a 16-page read takes simulated time: {read_us} us");
    // A lower bound only: the reply cannot come before its simulated latency.
    assert!(waited.as_secs_f64() * 1e6 >= read_us * 0.99, "waited {waited:?} for a {read_us} us read");
}

/// A weak hash (`--hash tiny:2`: four fingerprints) makes real collisions,
/// and the engines see them: Light-Dedup's verify read compares the bytes
/// and refuses the match; CAFTL and SmartDedup, which trust their hash,
/// count each match of different bytes as a false match. Every engine
/// still finds the true duplicates, and the bytes read back exactly.
#[test]
fn a_weak_hash_makes_collisions_the_engines_see() {
    for (engine, key) in [
        ("caftl", "engine_false_matches"),
        ("smartdedup", "engine_false_matches"),
        ("light-dedup", "engine_real_collisions"),
    ] {
        for hash in ["tiny:2", "xxh3"] {
            let dir = tempfile::tempdir().unwrap();
            let json = dir.path().join("serve.json");
            let srv = Server::start(
                dir.path(),
                &["--engine", engine, "--hash", hash, "--json", json.to_str().unwrap(), "--check"],
            );
            let (mut c, _) = Client::connect(&srv.sock);
            // 24 distinct pages, then the same 24 again elsewhere.
            let data: Vec<u8> = (0..24).flat_map(|k| bytes(100 + k, 4096)).collect();
            assert_eq!(c.write(0, &data), 0);
            assert_eq!(c.write(64 * 4096, &data), 0);
            assert!(c.read(0, data.len() as u32).unwrap() == data, "{engine} {hash}");
            assert!(c.read(64 * 4096, data.len() as u32).unwrap() == data, "{engine} {hash}");
            c.disconnect();
            srv.wait();
            let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
            let seen = j[0]["engine_stats"][key].as_f64().unwrap_or_else(|| panic!("{engine}: no {key}: {j}"));
            let dedup = j[0]["summary"]["dedup_rate_achieved"].as_f64().unwrap();
            if hash == "xxh3" {
                assert_eq!(seen, 0.0, "{engine}: {key} without collisions");
            } else {
                // 24 contents in 4 fingerprints: most first writes collide.
                assert!(seen >= 10.0, "{engine}: {key} = {seen}");
            }
            // 24 of 48 pages are duplicates. With four fingerprints an
            // engine's own index holds one content per fingerprint, so it
            // finds fewer of them (CAFTL's is the FTL's, by content: all).
            let least = if hash == "xxh3" || engine == "caftl" { 0.5 } else { 4.0 / 48.0 };
            assert!(dedup >= least - 1e-9, "{engine} {hash}: true duplicates found: {dedup} < {least}");
        }
    }
}
