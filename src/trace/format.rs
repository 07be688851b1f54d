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

use super::TraceError;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How many non-blank lines detection looks at.
pub const DETECT_LINES: usize = 16;

/// A supported trace format.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
    #[serde(rename = "libcachesim")]
    LibCacheSim,
    /// SSDsim ASCII; see [`super::ssdsim`].
    Ssdsim,
    /// MQSim ASCII; see [`super::mqsim`].
    Mqsim,
    /// dedupsim's own format; see [`super::native`].
    Native,
}

impl TraceFormat {
    /// Every format, in the order they are listed to users.
    pub const ALL: [TraceFormat; 10] = [
        TraceFormat::Msr,
        TraceFormat::Fiu,
        TraceFormat::FiuHomes,
        TraceFormat::Umass,
        TraceFormat::Systor,
        TraceFormat::Tencent,
        TraceFormat::LibCacheSim,
        TraceFormat::Ssdsim,
        TraceFormat::Mqsim,
        TraceFormat::Native,
    ];

    /// The name used on the command line and in outputs.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Msr => "msr",
            TraceFormat::Fiu => "fiu",
            TraceFormat::FiuHomes => "fiu-homes",
            TraceFormat::Umass => "umass",
            TraceFormat::Systor => "systor",
            TraceFormat::Tencent => "tencent",
            TraceFormat::LibCacheSim => "libcachesim",
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
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = TraceError;

    /// Case-insensitive; also accepts a few common aliases (`msr-cambridge`,
    /// `spc`, `systor17`, `vdi`, `cbs`, `cloudphysics`, `vscsi`, `disksim`,
    /// `dedupsim`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase().replace('_', "-");
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
    if line.contains(',') {
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
            n if n >= 5 && f[..3].iter().all(|x| is_uint(x)) && rw(3) && is_decimal(f[4]) => fmt(TraceFormat::Umass),
            _ => None,
        }
    } else {
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
            assert_eq!(f.name().parse::<TraceFormat>().unwrap(), f);
            assert_eq!(f.to_string(), f.name());
        }
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
        assert_eq!(d("hello world"), None);
        assert_eq!(detect(&[], None), None);
    }

    #[test]
    fn majority_wins() {
        let lines = ["garbage,line", "0,1,8,r,0.1", "0,9,8,w,0.2"];
        assert_eq!(detect(&lines, None), Some(TraceFormat::Umass));
    }
}
