//! Trace format names and auto-detection.
//!
//! Detection looks at the first non-blank lines (up to [`DETECT_LINES`]): a
//! `# dedupsim-trace` header means the native format; otherwise every
//! non-comment line is classified by its shape (separator, field count, where
//! the operation field is and how it is spelled) and the most common verdict
//! wins, so a single odd first line does not derail detection. The caller can
//! always override it.
//!
//! libCacheSim's CSV and Tencent's both have five numeric columns: Tencent's
//! fourth is its 0/1 op, libCacheSim's third a SCSI READ/WRITE opcode.
//!
//! SSDsim and MQSim share the DiskSim-derived ASCII layout
//! `time device sector size op(1 = read, 0 = write)` with identical units, so
//! no content can tell them apart; detection reports `ssdsim` for files named
//! `*.ascii` (SSDsim's and DiskSim's convention) or containing "ssdsim" and
//! `mqsim` otherwise. The choice only changes the reported name.
//!
//! Three formats carry options in their name, after a colon, so that they
//! work wherever a format name is accepted: `blkparse:Q` (which blkparse
//! event is the request; [`BlkEvent`]), `fio-iolog:ms` (the v3 timestamp
//! unit) and `csv:time=1,...` (the column map; [`CsvSpec`]). [`Display`]
//! prints the full name, which parses back to the same format.
//!
//! blkparse lines start with `major,minor` (a comma) and are recognised
//! before the comma-separated formats; FIU's lines (also in `*.blkparse`
//! files) start with a plain number. fio's iolog is recognised by its
//! header, fio's per-I/O logs by four to seven integer columns whose third
//! is a data direction (0, 1, 2) and whose fourth is not Tencent's 0/1 op.
//! `csv` is never detected.
//!
//! [`Display`]: fmt::Display

use super::blkparse::BlkEvent;
use super::csv::{CsvSpec, TimeUnit};
use super::TraceError;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// How many non-blank lines detection looks at.
pub const DETECT_LINES: usize = 16;

/// A supported trace format.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// MSR Cambridge CSV (SNIA IOTTA 388); see [`super::msr`].
    Msr,
    /// FIU IODedup blkparse with one MD5 per 4 KiB block; see [`super::fiu`].
    Fiu,
    /// FIU IODedup "homes" variant with one MD5 per 512 B sector.
    FiuHomes,
    /// UMass / SPC CSV; see [`super::umass`].
    Umass,
    /// SYSTOR'17 VDI CSV; see [`super::systor`].
    Systor,
    /// Tencent CBS CSV; see [`super::tencent`].
    Tencent,
    /// libCacheSim's block-trace CSV (CloudPhysics vSCSI); see [`super::libcachesim`].
    LibCacheSim,
    /// blkparse's default text output, one event kind as the requests; see [`super::blkparse`].
    Blkparse(BlkEvent),
    /// fio's `--write_iolog` (versions 2 and 3), v3 timestamps in this unit; see [`super::fio`].
    FioIolog(TimeUnit),
    /// fio's per-I/O latency/bandwidth logs with `log_offset=1`; see [`super::fio`].
    FioLog,
    /// A delimited text trace with a user-given column map; see [`super::csv`].
    Csv(CsvSpec),
    /// SSDsim ASCII; see [`super::ssdsim`].
    Ssdsim,
    /// MQSim ASCII; see [`super::mqsim`].
    Mqsim,
    /// dedupsim's own format; see [`super::native`].
    Native,
}

impl TraceFormat {
    /// Every format, in the order they are listed to users.
    /// (`csv` is represented by its [`CsvSpec::EXAMPLE`] column map.)
    pub const ALL: [TraceFormat; 14] = [
        TraceFormat::Msr,
        TraceFormat::Fiu,
        TraceFormat::FiuHomes,
        TraceFormat::Umass,
        TraceFormat::Systor,
        TraceFormat::Tencent,
        TraceFormat::LibCacheSim,
        TraceFormat::Ssdsim,
        TraceFormat::Mqsim,
        TraceFormat::Blkparse(BlkEvent::Dispatch),
        TraceFormat::FioIolog(TimeUnit::Us),
        TraceFormat::FioLog,
        TraceFormat::Csv(CsvSpec::EXAMPLE),
        TraceFormat::Native,
    ];

    /// The name used on the command line, without options (the full name,
    /// options included, is the [`Display`](fmt::Display) form).
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Msr => "msr",
            TraceFormat::Fiu => "fiu",
            TraceFormat::FiuHomes => "fiu-homes",
            TraceFormat::Umass => "umass",
            TraceFormat::Systor => "systor",
            TraceFormat::Tencent => "tencent",
            TraceFormat::LibCacheSim => "libcachesim",
            TraceFormat::Blkparse(_) => "blkparse",
            TraceFormat::FioIolog(_) => "fio-iolog",
            TraceFormat::FioLog => "fio-log",
            TraceFormat::Csv(_) => "csv",
            TraceFormat::Ssdsim => "ssdsim",
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::Native => "native",
        }
    }

    /// One-line description of the line layout and units (for `--help`).
    pub fn summary(self) -> &'static str {
        match self {
            TraceFormat::Msr => {
                "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime \
                 (FILETIME 100 ns ticks; bytes; Read/Write)"
            }
            TraceFormat::Fiu => {
                "ts pid process lba size op major minor md5 \
                 (ns; 512 B sectors; R/W; MD5 per 4 KiB)"
            }
            TraceFormat::FiuHomes => "as fiu, with one MD5 per 512 B sector (8 per 4 KiB record)",
            TraceFormat::Umass => "ASU,LBA,Size,Opcode,Timestamp[,...] (s; LBA in 512 B sectors, size in bytes; r/w)",
            TraceFormat::Systor => "Timestamp,Response,IOType,LUN,Offset,Size (Unix s; bytes; R/W)",
            TraceFormat::Tencent => "Timestamp,Offset,Size,IOType,VolumeID (s; 512 B sectors; 0 = read, 1 = write)",
            TraceFormat::LibCacheSim => {
                "version,time,op,size,lbn (s; bytes, lbn in 512 B sectors; SCSI opcode 28 read, 2a write, hex)"
            }
            TraceFormat::Blkparse(_) => {
                "maj,min cpu seq time pid action rwbs sector + nsectors [process] (s; 512 B sectors; \
                 RWBS R/W/D; D events, blkparse:Q or blkparse:C for Q or C)"
            }
            TraceFormat::FioIolog(_) => {
                "fio version 2|3 iolog, then [time] file action [offset length] (v3 us, fio-iolog:ms for ms; bytes; \
                 read/write/trim)"
            }
            TraceFormat::FioLog => "time, value, ddir, bs, offset[, prio] (ms; bytes; 0 read, 1 write, 2 trim)",
            TraceFormat::Csv(_) => {
                "csv:time=N,op=N,offset=N,size=N[,volume=N,op-read=R,op-write=W,op-trim=T,time-unit=s|ms|us|ns,\
                 offset-unit=byte|sector|kib|N,size-unit=...,delimiter=comma|tab|space|...,header=true]"
            }
            TraceFormat::Ssdsim => "time devno lsn size ope (ns; 512 B sectors; 1 = read, 0 = write)",
            TraceFormat::Mqsim => "arrival_time device lba size type (ns; 512 B sectors; 1 = read, 0 = write)",
            TraceFormat::Native => {
                "# dedupsim-trace v1, then time_ns op offset size [volume [hashes]] \
                 (ns; bytes; R/W/T)"
            }
        }
    }

    /// The format names, comma-separated (for messages).
    pub fn names() -> String {
        Self::ALL.map(Self::name).join(", ")
    }
}

impl fmt::Display for TraceFormat {
    /// The full name: `blkparse:Q`, `fio-iolog:ms`, `csv:time=1,...`; the
    /// bare name for the defaults (`blkparse` = `blkparse:D`, `fio-iolog` =
    /// `fio-iolog:us`) and the formats without options.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceFormat::Blkparse(e) if *e != BlkEvent::Dispatch => write!(f, "blkparse:{e}"),
            TraceFormat::FioIolog(u) if *u != TimeUnit::Us => write!(f, "fio-iolog:{}", u.name()),
            TraceFormat::Csv(spec) => write!(f, "csv:{spec}"),
            _ => f.write_str(self.name()),
        }
    }
}

impl Serialize for TraceFormat {
    /// As its full name (the formats without options as before: `"msr"`).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for TraceFormat {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for TraceFormat {
    type Err = TraceError;

    /// Case-insensitive; also accepts a few common aliases (`msr-cambridge`,
    /// `spc`, `systor17`, `vdi`, `cbs`, `cloudphysics`, `vscsi`, `disksim`,
    /// `dedupsim`).
    ///
    /// Options follow a colon: `blkparse:D|Q|C`, `fio-iolog:s|ms|us|ns`,
    /// `csv:COLUMN MAP` (required; see [`super::csv`]).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (base, opts) = match s.trim().split_once(':') {
            Some((b, o)) => (b, Some(o.trim())),
            None => (s.trim(), None),
        };
        let lower = base.trim().to_ascii_lowercase().replace('_', "-");
        let bad = |reason: String| TraceError::FormatSpec { spec: s.trim().to_string(), reason };
        match (lower.as_str(), opts) {
            ("blkparse" | "blktrace", o) => {
                return match o {
                    None => Ok(TraceFormat::Blkparse(BlkEvent::Dispatch)),
                    Some(e) => BlkEvent::parse(e).map(TraceFormat::Blkparse).ok_or_else(|| {
                        bad(format!("{} is not a blkparse event to read as the requests: D, Q or C", super::quote(e)))
                    }),
                }
            }
            ("fio-iolog" | "iolog", o) => {
                return match o {
                    None => Ok(TraceFormat::FioIolog(TimeUnit::Us)),
                    Some(u) => TimeUnit::parse(u)
                        .map(TraceFormat::FioIolog)
                        .ok_or_else(|| bad(format!("{} is not a time unit (s, ms, us, ns)", super::quote(u)))),
                }
            }
            ("csv" | "tsv", None) => {
                return Err(bad(
                    "the csv format needs a column map, e.g. csv:time=1,op=2,offset=3,size=4 (docs/trace-formats.md)"
                        .into(),
                ))
            }
            ("csv" | "tsv", Some(spec)) => {
                let spec = if lower == "tsv" && !spec.contains("delimiter") {
                    format!("{spec},delimiter=tab")
                } else {
                    spec.to_string()
                };
                return CsvSpec::parse(&spec).map(TraceFormat::Csv).map_err(bad);
            }
            (_, Some(_)) if Self::ALL.iter().any(|f| f.name() == lower) => {
                return Err(bad(format!("the {lower} format takes no options")))
            }
            _ => {}
        }
        let f = match lower.as_str() {
            "msr" | "msr-cambridge" => TraceFormat::Msr,
            "fiu" | "fiu-iodedup" => TraceFormat::Fiu,
            "fiu-homes" | "homes" => TraceFormat::FiuHomes,
            "umass" | "spc" => TraceFormat::Umass,
            "systor" | "systor17" | "vdi" => TraceFormat::Systor,
            "tencent" | "cbs" => TraceFormat::Tencent,
            "libcachesim" | "cloudphysics" | "vscsi" => TraceFormat::LibCacheSim,
            "ssdsim" | "disksim" => TraceFormat::Ssdsim,
            "mqsim" => TraceFormat::Mqsim,
            "native" | "dedupsim" => TraceFormat::Native,
            "fio-log" | "fio-lat-log" | "fio-bw-log" => TraceFormat::FioLog,
            _ => return Err(TraceError::UnknownFormat { name: s.to_string(), known: Self::names() }),
        };
        Ok(f)
    }
}

/// Shape-based verdict on one line.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Shape {
    Format(TraceFormat),
    /// SSDsim or MQSim (decided by file name).
    DiskSim,
}

fn is_uint(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A decimal number (out-of-range and negative ones included: the parser
/// then says what is wrong with it).
fn is_decimal(s: &str) -> bool {
    super::parse::parse_seconds(s) != Err(super::parse::SecondsError::NotANumber)
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn classify(line: &str) -> Option<Shape> {
    let fmt = |f| Some(Shape::Format(f));
    if super::blkparse::is_event_line(line) {
        return fmt(TraceFormat::Blkparse(BlkEvent::Dispatch));
    }
    if line.contains(',') {
        if let Some(s) = classify_csv(line) {
            return Some(s);
        }
    }
    // Not a comma-separated shape (an FIU process name may hold a comma).
    classify_whitespace(line)
}

fn classify_csv(line: &str) -> Option<Shape> {
    let fmt = |f| Some(Shape::Format(f));
    {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let eq = |i: usize, w: &str| f.get(i).is_some_and(|x| x.eq_ignore_ascii_case(w));
        let rw = |i: usize| f.get(i).is_some_and(|x| matches!(*x, "R" | "W" | "r" | "w"));
        // Header lines.
        if eq(0, "timestamp") && eq(2, "iotype") {
            return fmt(TraceFormat::Systor);
        }
        if eq(0, "timestamp") && eq(1, "hostname") {
            return fmt(TraceFormat::Msr);
        }
        if eq(0, "timestamp") && eq(3, "iotype") {
            return fmt(TraceFormat::Tencent);
        }
        if super::libcachesim::is_header(line) {
            return fmt(TraceFormat::LibCacheSim);
        }
        let scsi_rw = |s: &str| super::libcachesim::parse_op(s).is_ok();
        match f.len() {
            7 if is_uint(f[0]) && (eq(3, "read") || eq(3, "write")) => fmt(TraceFormat::Msr),
            6 if is_decimal(f[0]) && rw(2) && is_uint(f[4]) => fmt(TraceFormat::Systor),
            5 if f.iter().all(|x| is_uint(x)) && matches!(f[3], "0" | "1") => fmt(TraceFormat::Tencent),
            5 if [0, 1, 3, 4].iter().all(|&i| is_uint(f[i])) && scsi_rw(f[2]) => fmt(TraceFormat::LibCacheSim),
            _ if super::fio::is_log_line(&f) => fmt(TraceFormat::FioLog),
            n if n >= 5 && f[..3].iter().all(|x| is_uint(x)) && rw(3) && is_decimal(f[4]) => fmt(TraceFormat::Umass),
            _ => None,
        }
    }
}

fn classify_whitespace(line: &str) -> Option<Shape> {
    let fmt = |f| Some(Shape::Format(f));
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        let n = f.len();
        let op_at = |i: usize| f.get(i).is_some_and(|x| matches!(*x, "R" | "W" | "r" | "w"));
        // FIU: ts pid process... lba size op major minor [digest]; the process
        // name may contain spaces, so anchor on the end of the line.
        // (A malformed digest still makes an FIU line: the parser says what
        // is wrong with it.)
        if n >= 9 && is_uint(f[0]) && op_at(n - 4) && is_uint(f[n - 3]) && is_uint(f[n - 2]) {
            let sectors: usize = f[n - 5].parse().unwrap_or(0);
            let digests = if is_hex(f[n - 1]) { f[n - 1].len() / 32 } else { 0 };
            return if sectors > 1 && digests == sectors { fmt(TraceFormat::FiuHomes) } else { fmt(TraceFormat::Fiu) };
        }
        if n == 8 && is_uint(f[0]) && op_at(5) && is_uint(f[3]) && is_uint(f[4]) {
            return fmt(TraceFormat::Fiu);
        }
        if n == 5 && f.iter().all(|x| is_uint(x)) && matches!(f[4], "0" | "1") {
            return Some(Shape::DiskSim);
        }
        let native_op = |x: &str| matches!(x, "R" | "W" | "T" | "r" | "w" | "t");
        if (4..=6).contains(&n) && is_uint(f[0]) && native_op(f[1]) && is_uint(f[2]) && is_uint(f[3]) {
            return fmt(TraceFormat::Native);
        }
        None
    }
}

/// Guesses the format of a trace from its first lines. `file_name` (e.g. the
/// path's file name) only breaks the SSDsim/MQSim tie. Returns `None` when
/// no line is recognised.
pub fn detect(lines: &[&str], file_name: Option<&str>) -> Option<TraceFormat> {
    let mut non_blank = lines.iter().map(|l| l.trim()).filter(|l| !l.is_empty());
    if non_blank.clone().next().is_some_and(|l| l.starts_with("# dedupsim-trace")) {
        return Some(TraceFormat::Native);
    }
    if non_blank
        .clone()
        .next()
        .is_some_and(|l| l.starts_with("fio version 2 iolog") || l.starts_with("fio version 3 iolog"))
    {
        return Some(TraceFormat::FioIolog(TimeUnit::Us));
    }
    let mut votes: Vec<(Shape, usize)> = Vec::new();
    for l in non_blank.by_ref().filter(|l| !l.starts_with('#')) {
        if let Some(s) = classify(l) {
            match votes.iter_mut().find(|(v, _)| *v == s) {
                Some((_, c)) => *c += 1,
                None => votes.push((s, 1)),
            }
        }
    }
    // Most votes; ties go to the shape seen first.
    let mut best: Option<(Shape, usize)> = None;
    for &(s, c) in &votes {
        match best {
            Some((_, bc)) if c <= bc => {}
            _ => best = Some((s, c)),
        }
    }
    // FIU homes lines are FIU lines too: any homes vote decides for homes.
    let homes = votes.iter().any(|(s, _)| *s == Shape::Format(TraceFormat::FiuHomes));
    match best?.0 {
        Shape::Format(TraceFormat::Fiu) if homes => Some(TraceFormat::FiuHomes),
        Shape::Format(f) => Some(f),
        Shape::DiskSim => {
            let name = file_name.unwrap_or("").to_ascii_lowercase();
            let stem = name.trim_end_matches(".gz").trim_end_matches(".zst").trim_end_matches(".zstd");
            if stem.ends_with(".ascii") || name.contains("ssdsim") {
                Some(TraceFormat::Ssdsim)
            } else {
                Some(TraceFormat::Mqsim)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in TraceFormat::ALL {
            assert_eq!(f.to_string().parse::<TraceFormat>().unwrap(), f);
            if !matches!(f, TraceFormat::Csv(_)) {
                assert_eq!(f.name().parse::<TraceFormat>().unwrap(), f);
                assert_eq!(f.to_string(), f.name());
            }
            let json = serde_json::to_string(&f).unwrap();
            assert_eq!(serde_json::from_str::<TraceFormat>(&json).unwrap(), f);
        }
        assert_eq!(serde_json::to_string(&TraceFormat::Msr).unwrap(), "\"msr\"");
        for (name, f) in [
            ("blkparse:Q", TraceFormat::Blkparse(BlkEvent::Queue)),
            ("blkparse:c", TraceFormat::Blkparse(BlkEvent::Complete)),
            ("fio-iolog:ms", TraceFormat::FioIolog(TimeUnit::Ms)),
        ] {
            assert_eq!(name.parse::<TraceFormat>().unwrap(), f);
            assert_eq!(f.to_string().parse::<TraceFormat>().unwrap(), f);
        }
        let csv: TraceFormat = "tsv:time=1,op=2,offset=3,size=4".parse().unwrap();
        assert_eq!(
            csv.to_string(),
            "csv:time=1,offset=3,size=4,op=2,time-unit=s,offset-unit=byte,size-unit=byte,delimiter=tab,header=false"
        );
        let e = |s: &str| s.parse::<TraceFormat>().unwrap_err().to_string();
        assert_eq!(
            e("blkparse:X"),
            "invalid trace format \"blkparse:X\": \"X\" is not a blkparse event to read as the requests: D, Q or C"
        );
        assert!(e("csv").contains("needs a column map"));
        assert!(e("csv:time=1").contains("missing required columns `offset`, `size`, `op`"));
        assert_eq!(e("msr:x"), "invalid trace format \"msr:x\": the msr format takes no options");
        let e = "nope".parse::<TraceFormat>().unwrap_err().to_string();
        assert!(e.contains("nope") && e.contains("msr, fiu, fiu-homes"), "{e}");
    }

    #[test]
    fn detects_each_shape() {
        let d = |l: &str| detect(&[l], None);
        assert_eq!(d("128166385295514663,hm,0,Write,9056014336,2048,2833"), Some(TraceFormat::Msr));
        assert_eq!(
            d("89966522969723 4270 rpc.mountd 18579576 8 W 6 0 d6c75ba46e82326fefa545b57a12e221"),
            Some(TraceFormat::Fiu)
        );
        let homes = format!("7775 2552 kjournald 160806224 8 W 6 0 {}", "ab".repeat(128));
        assert_eq!(d(&homes), Some(TraceFormat::FiuHomes));
        assert_eq!(d("0,20941264,8192,W,0.551706,Alpha/NT"), Some(TraceFormat::Umass));
        assert_eq!(d("0,1199912,8192,r,0.000000"), Some(TraceFormat::Umass));
        assert_eq!(d("1455591804.310701000,0.006475000,R,0,203468398592,32768"), Some(TraceFormat::Systor));
        assert_eq!(d("Timestamp,Response,IOType,LUN,Offset,Size"), Some(TraceFormat::Systor));
        assert_eq!(d("1538323200,12345,8,1,1063"), Some(TraceFormat::Tencent));
        assert_eq!(d("Timestamp,Offset,Size,IOType,VolumeID"), Some(TraceFormat::Tencent));
        assert_eq!(d("version,time,op,size,lbn"), Some(TraceFormat::LibCacheSim));
        assert_eq!(d("1,5633898368802,42,512,42932745"), Some(TraceFormat::LibCacheSim));
        // libCacheSim's own sample: bare hex opcodes.
        assert_eq!(d("1,5633898,2a,512,42932745"), Some(TraceFormat::LibCacheSim));
        assert_eq!(d("1,5633898,28,512,42932745"), Some(TraceFormat::LibCacheSim));
        assert_eq!(d("1,5633898368802,0x28,6656,40409911"), Some(TraceFormat::LibCacheSim));
        // A Tencent line whose size happens to be an opcode stays Tencent.
        assert_eq!(d("1538323200,12345,42,1,1063"), Some(TraceFormat::Tencent));
        assert_eq!(d("11413000 0 657728 16 1"), Some(TraceFormat::Mqsim));
        assert_eq!(detect(&["0 0 303567 7 0"], Some("example.ascii.gz")), Some(TraceFormat::Ssdsim));
        assert_eq!(d("# dedupsim-trace v1"), Some(TraceFormat::Native));
        assert_eq!(d("100 W 0 4096"), Some(TraceFormat::Native));
        assert_eq!(
            d("8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]"),
            Some(TraceFormat::Blkparse(BlkEvent::Dispatch))
        );
        assert_eq!(d("fio version 3 iolog"), Some(TraceFormat::FioIolog(TimeUnit::Us)));
        assert_eq!(d("1, 183, 0, 4096, 1736704, 0"), Some(TraceFormat::FioLog));
        assert_eq!(d("12, 183, 1, 4096, 0"), Some(TraceFormat::FioLog));
        assert_eq!(d("hello world"), None);
        assert_eq!(detect(&[], None), None);
    }

    #[test]
    fn majority_wins() {
        let lines = ["garbage,line", "0,1,8,r,0.1", "0,9,8,w,0.2"];
        assert_eq!(detect(&lines, None), Some(TraceFormat::Umass));
    }
}
