//! Trace format names, the registry of formats ([`FORMATS`]) and what
//! each line declares: parser, options, sample writer and the rules that
//! detect it ([`super::detect`], which reads them). The caller can always
//! override detection.
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
use super::detect::Rule;
use super::load::{FastParse, LoadOptions};
use super::parse::{LineParser, Stateless};
use super::TraceError;
use crate::registry::{Entry, Registry};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::io::Write;
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

/// What a trace format's [`FORMATS`] line holds beside its name and its
/// one-line description (the line layout and units, for `--help`).
#[derive(Copy, Clone)]
pub struct Registered {
    /// The format a bare name means (its default options; `csv`: its
    /// [`CsvSpec::EXAMPLE`] column map, as listings show it).
    pub format: TraceFormat,
    /// Other names accepted for it (lowercase, `-` for `_`).
    pub aliases: &'static [&'static str],
    /// Why a bare name is not enough (`csv` needs a column map).
    pub needs_options: Option<&'static str>,
    /// Reads `NAME:OPTIONS` into the format (`None`: it takes no options);
    /// gets the name as typed (lowercase) and the options.
    pub options: Option<ParseOptions>,
    /// A value's options as `NAME:OPTIONS` writes them (`None` for the
    /// defaults, which print as the bare name): the `Display` form.
    pub show_options: Option<fn(TraceFormat) -> Option<String>>,
    /// How `--format`'s help names it (`blkparse[:D|Q|C]`; the bare name
    /// if empty): [`format_help`].
    pub usage: &'static str,
    /// Its line parser for `format` (a value of this line's variant).
    pub(crate) parser: fn(TraceFormat, &LoadOptions) -> Box<dyn LineParser>,
    /// Its byte-level fast path, if it has one ([`FastParse`]).
    pub(crate) fast: Option<FastParse>,
    /// How to write a request as this format's lines (after the header
    /// lines), for `dedupsim bench --parsers`; `None`: written otherwise
    /// (`native`, with its contents: [`super::write_native_workload`]).
    pub sample: Option<(&'static str, SampleWriter)>,
    /// How detection recognises it ([`super::detect`]; empty: never).
    pub detect: &'static [Rule],
}

/// Reads a format's options (`blkparse:Q`: the name as typed, lowercase,
/// and `Q`) into the format, or says what is wrong with them.
pub type ParseOptions = fn(&str, &str) -> Result<TraceFormat, String>;

/// One request to write as a sample trace line ([`Registered::sample`]).
#[derive(Copy, Clone, Debug)]
pub struct SampleRequest {
    /// Arrival, ns.
    pub time: u64,
    pub read: bool,
    /// Byte offset and length (multiples of 4 KiB).
    pub offset: u64,
    pub size: u64,
}

impl SampleRequest {
    /// Offset and size in 512 B sectors.
    fn sectors(&self) -> (u64, u64) {
        (self.offset / 512, self.size / 512)
    }

    /// The arrival as whole seconds and nanoseconds.
    fn secs(&self) -> (u64, u64) {
        (self.time / 1_000_000_000, self.time % 1_000_000_000)
    }
}

/// Writes one request as a format's lines, with arbitrary but well-formed
/// values in the fields the parser ignores.
pub type SampleWriter = fn(&mut dyn Write, &SampleRequest) -> std::io::Result<()>;

/// FIU's lines of one request: one per 4 KiB page, with `digests` MD5s
/// (1 for `fiu`, 8 for `fiu-homes`).
fn fiu_sample(out: &mut dyn Write, r: &SampleRequest, digests: u128) -> std::io::Result<()> {
    for k in 0..r.size / 4096 {
        let lba = (r.offset + k * 4096) / 512;
        write!(out, "{} 4270 rpc.mountd {lba} 8 {} 6 0 ", r.time, if r.read { 'R' } else { 'W' })?;
        for d in 0..digests {
            write!(out, "{:032x}", (u128::from(lba) << 8 | d) * 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// SSDsim's and MQSim's line.
fn disksim_sample(out: &mut dyn Write, r: &SampleRequest) -> std::io::Result<()> {
    let (lsn, sectors) = r.sectors();
    writeln!(out, "{} 0 {lsn} {sectors} {}", r.time, u8::from(r.read))
}

/// blkparse's lines of one request: queued, dispatched and completed
/// (kjournald on CPU 3, completions on CPU 1), as blkparse prints them.
fn blkparse_sample(out: &mut dyn Write, r: &SampleRequest) -> std::io::Result<()> {
    let (lsn, sectors) = r.sectors();
    let (rw, c) = (if r.read { "R" } else { "WS" }, r.time / 1000 % 1_000_000);
    for (k, (a, dt)) in [("Q", 0), ("D", 1_000), ("C", 100_000)].into_iter().enumerate() {
        let (ts, tn) = ((r.time + dt) / 1_000_000_000, (r.time + dt) % 1_000_000_000);
        let proc_ = if a == "C" { "[0]" } else { "[kjournald]" };
        writeln!(
            out,
            "  8,0    3 {:>8} {ts:5}.{tn:09}   697  {a} {rw:>3} {lsn} + {sectors} {proc_}",
            c * 3 + k as u64
        )?;
    }
    Ok(())
}

impl fmt::Debug for Registered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registered").field("format", &self.format).field("aliases", &self.aliases).finish()
    }
}

/// One [`FORMATS`] line for a format without options.
const fn plain(
    name: &'static str,
    aliases: &'static [&'static str],
    about: &'static str,
    format: TraceFormat,
    parser: fn(TraceFormat, &LoadOptions) -> Box<dyn LineParser>,
) -> Entry<Registered> {
    Entry {
        name,
        about,
        item: Registered {
            format,
            aliases,
            needs_options: None,
            options: None,
            show_options: None,
            usage: "",
            parser,
            fast: None,
            sample: None,
            detect: &[],
        },
    }
}

impl Entry<Registered> {
    /// The line with its sample writer, after `header` (lines, each ending
    /// in a newline; empty: none).
    const fn sample(mut self, header: &'static str, write: SampleWriter) -> Entry<Registered> {
        self.item.sample = Some((header, write));
        self
    }

    /// The line with the rules that recognise the format's lines
    /// ([`super::detect`]).
    const fn detect(mut self, rules: &'static [Rule]) -> Entry<Registered> {
        self.item.detect = rules;
        self
    }

    /// The line with a byte-level fast path.
    const fn fast(mut self, fast: FastParse) -> Entry<Registered> {
        self.item.fast = Some(fast);
        self
    }

    /// The line of a format that takes options after a colon (`needs`:
    /// why its bare name is not enough, if it is not; `usage`: how
    /// `--format`'s help names it; `show`: a value's options as written
    /// after the colon, `None` for the defaults).
    const fn options(
        mut self,
        needs: Option<&'static str>,
        usage: &'static str,
        options: ParseOptions,
        show: fn(TraceFormat) -> Option<String>,
    ) -> Entry<Registered> {
        self.item.needs_options = needs;
        self.item.usage = usage;
        self.item.options = Some(options);
        self.item.show_options = Some(show);
        self
    }
}

/// Every trace format, one line each, in the order they are listed to
/// users. Adding a format: its parser's file, its [`TraceFormat`] variant
/// and one line here (with its detection rules, [`super::detect`], if it
/// can be recognised from its lines). Names, aliases, options, the
/// `Display` form, `--format`'s help ([`format_help`]), the loader's parser
/// and the parser benchmark all read the line.
pub const FORMATS: Registry<Registered> = Registry::new(
    "trace format",
    &[
        plain(
            "msr",
            &["msr-cambridge"],
            "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime (FILETIME 100 ns ticks; bytes; Read/Write)",
            TraceFormat::Msr,
            |_, _| Box::new(Stateless(super::msr::parse_line)),
        )
        .sample("", |o, r| {
            let op = if r.read { "Read" } else { "Write" };
            writeln!(o, "{},hm,0,{op},{},{},2833", 128_166_372_000_000_000 + r.time / 100, r.offset, r.size)
        })
        .detect(&[
            Rule::Shape { rank: 11, test: super::msr::is_header },
            Rule::Shape { rank: 20, test: super::msr::is_line },
        ]),
        plain(
            "fiu",
            &["fiu-iodedup"],
            "ts pid process lba size op major minor md5 (ns; 512 B sectors; R/W; MD5 per 4 KiB)",
            TraceFormat::Fiu,
            |_, o| Box::new(super::fiu::FiuParser::new(o.fiu_merge_gap, false)),
        )
        .sample("", |o, r| fiu_sample(o, r, 1))
        .detect(&[Rule::Shape { rank: 31, test: super::fiu::is_line }]),
        plain(
            "fiu-homes",
            &["homes"],
            "as fiu, with one MD5 per 512 B sector (8 per 4 KiB record)",
            TraceFormat::FiuHomes,
            |_, o| Box::new(super::fiu::FiuParser::new(o.fiu_merge_gap, true)),
        )
        .sample("", |o, r| fiu_sample(o, r, 8))
        .detect(&[Rule::Shape { rank: 30, test: super::fiu::is_homes_line }, Rule::Refines(TraceFormat::Fiu)]),
        plain(
            "umass",
            &["spc"],
            "ASU,LBA,Size,Opcode,Timestamp[,...] (s; LBA in 512 B sectors, size in bytes; r/w)",
            TraceFormat::Umass,
            |_, _| Box::new(Stateless(super::umass::parse_line)),
        )
        .sample("", |o, r| {
            let ((lsn, _), (s, ns)) = (r.sectors(), r.secs());
            writeln!(o, "0,{lsn},{},{},{s}.{:06}", r.size, if r.read { 'r' } else { 'w' }, ns / 1000)
        })
        .detect(&[Rule::Shape { rank: 25, test: super::umass::is_line }]),
        plain(
            "systor",
            &["systor17", "vdi"],
            "Timestamp,Response,IOType,LUN,Offset,Size (Unix s; bytes; R/W)",
            TraceFormat::Systor,
            |_, _| Box::new(Stateless(super::systor::parse_line)),
        )
        .sample("Timestamp,Response,IOType,LUN,Offset,Size\n", |o, r| {
            let (s, ns) = r.secs();
            let op = if r.read { 'R' } else { 'W' };
            writeln!(o, "{}.{ns:09},0.000100000,{op},0,{},{}", 1_455_591_804 + s, r.offset, r.size)
        })
        .detect(&[
            Rule::Shape { rank: 10, test: super::systor::is_header },
            Rule::Shape { rank: 21, test: super::systor::is_line },
        ]),
        plain(
            "tencent",
            &["cbs"],
            "Timestamp,Offset,Size,IOType,VolumeID (s; 512 B sectors; 0 = read, 1 = write)",
            TraceFormat::Tencent,
            |_, _| Box::new(Stateless(super::tencent::parse_line)),
        )
        .sample("", |o, r| {
            let ((lsn, sectors), (s, ns)) = (r.sectors(), r.secs());
            writeln!(o, "{}.{ns:09},{lsn},{sectors},{},1063", 1_538_323_200 + s, u8::from(!r.read))
        })
        .detect(&[
            Rule::Shape { rank: 12, test: super::tencent::is_header },
            Rule::Shape { rank: 22, test: super::tencent::is_line },
        ]),
        plain(
            "libcachesim",
            &["cloudphysics", "vscsi"],
            "version,time,op,size,lbn (s; bytes, lbn in 512 B sectors; SCSI opcode 28 read, 2a write, hex)",
            TraceFormat::LibCacheSim,
            |_, _| Box::new(Stateless(super::libcachesim::parse_line)),
        )
        .sample("version,time,op,size,lbn\n", |o, r| {
            writeln!(o, "1,{},{},{},{}", r.time / 1000, if r.read { 40 } else { 42 }, r.size, r.offset / 512)
        })
        .detect(&[
            Rule::Shape { rank: 13, test: super::libcachesim::is_header_line },
            Rule::Shape { rank: 23, test: super::libcachesim::is_line },
        ]),
        plain(
            "ssdsim",
            &["disksim"],
            "time devno lsn size ope (ns; 512 B sectors; 1 = read, 0 = write)",
            TraceFormat::Ssdsim,
            |_, _| Box::new(Stateless(super::ssdsim::parse_line)),
        )
        .sample("", disksim_sample)
        .fast(super::ssdsim::parse_disksim_fast)
        .detect(&[Rule::Shape { rank: 32, test: super::ssdsim::is_line }]),
        plain(
            "mqsim",
            &[],
            "arrival_time device lba size type (ns; 512 B sectors; 1 = read, 0 = write)",
            TraceFormat::Mqsim,
            |_, _| Box::new(Stateless(super::mqsim::parse_line)),
        )
        .sample("", disksim_sample)
        .fast(super::ssdsim::parse_disksim_fast)
        .detect(&[Rule::Shape { rank: 33, test: super::ssdsim::is_disksim_line }]),
        plain(
            "blkparse",
            &["blktrace"],
            "maj,min cpu seq time pid action rwbs sector + nsectors [process] (s; 512 B sectors; \
             RWBS R/W/D; D events, blkparse:Q or blkparse:C for Q or C)",
            TraceFormat::Blkparse(BlkEvent::Dispatch),
            |f, _| {
                let event = if let TraceFormat::Blkparse(e) = f { e } else { BlkEvent::Dispatch };
                Box::new(super::blkparse::BlkparseParser::new(event))
            },
        )
        .sample("", blkparse_sample)
        .options(
            None,
            "blkparse[:D|Q|C]",
            |_, e| {
                BlkEvent::parse(e).map(TraceFormat::Blkparse).ok_or_else(|| {
                    format!("{} is not a blkparse event to read as the requests: D, Q or C", super::quote(e))
                })
            },
            |f| match f {
                TraceFormat::Blkparse(e) if e != BlkEvent::Dispatch => Some(e.to_string()),
                _ => None,
            },
        )
        .detect(&[Rule::Shape { rank: 0, test: super::blkparse::is_line }]),
        plain(
            "fio-iolog",
            &["iolog"],
            "fio version 2|3 iolog, then [time] file action [offset length] (v3 us, fio-iolog:ms for ms; bytes; \
             read/write/trim)",
            TraceFormat::FioIolog(TimeUnit::Us),
            |f, _| {
                let unit = if let TraceFormat::FioIolog(u) = f { u } else { TimeUnit::Us };
                Box::new(super::fio::IologParser::new(unit))
            },
        )
        .sample("fio version 3 iolog\n0 /dev/nvme0n1 add\n1 /dev/nvme0n1 open\n", |o, r| {
            writeln!(
                o,
                "{} /dev/nvme0n1 {} {} {}",
                r.time / 1000,
                if r.read { "read" } else { "write" },
                r.offset,
                r.size
            )
        })
        .options(
            None,
            "fio-iolog[:ms]",
            |_, u| {
                TimeUnit::parse(u)
                    .map(TraceFormat::FioIolog)
                    .ok_or_else(|| format!("{} is not a time unit (s, ms, us, ns)", super::quote(u)))
            },
            |f| match f {
                TraceFormat::FioIolog(u) if u != TimeUnit::Us => Some(u.name().to_string()),
                _ => None,
            },
        )
        .detect(&[Rule::Signature("fio version 2 iolog"), Rule::Signature("fio version 3 iolog")]),
        plain(
            "fio-log",
            &["fio-lat-log", "fio-bw-log"],
            "time, value, ddir, bs, offset[, prio] (ms; bytes; 0 read, 1 write, 2 trim)",
            TraceFormat::FioLog,
            |_, _| Box::new(Stateless(super::fio::parse_log_line)),
        )
        .sample("", |o, r| {
            writeln!(o, "{}, 183, {}, {}, {}, 0", r.time / 1_000_000, u8::from(!r.read), r.size, r.offset)
        })
        .detect(&[Rule::Shape { rank: 24, test: super::fio::is_log }]),
        plain(
            "csv",
            &["tsv"],
            "csv:time=N,op=N,offset=N,size=N[,volume=N,op-read=R,op-write=W,op-trim=T,time-unit=s|ms|us|ns,\
             offset-unit=byte|sector|kib|N,size-unit=...,delimiter=comma|tab|space|...,header=true]",
            TraceFormat::Csv(CsvSpec::EXAMPLE),
            |f, _| {
                let spec = if let TraceFormat::Csv(spec) = f { spec } else { CsvSpec::EXAMPLE };
                Box::new(super::csv::CsvParser::new(spec))
            },
        )
        // The layout of `CsvSpec::EXAMPLE`.
        .sample("time_us,op,lba,bytes,volume\n", |o, r| {
            writeln!(o, "{},{},{},{},0", r.time / 1000, if r.read { 'R' } else { 'W' }, r.offset / 512, r.size)
        })
        .options(
            Some("the csv format needs a column map, e.g. csv:time=1,op=2,offset=3,size=4 (docs/trace-formats.md)"),
            "csv:COLUMNS (e.g. csv:time=1,op=2,offset=3,size=4; never detected)",
            |name, spec| {
                // `tsv:` is `csv:` with tab-separated columns.
                let spec = if name == "tsv" && !spec.contains("delimiter") {
                    format!("{spec},delimiter=tab")
                } else {
                    spec.to_string()
                };
                CsvSpec::parse(&spec).map(TraceFormat::Csv)
            },
            |f| match f {
                TraceFormat::Csv(spec) => Some(spec.to_string()),
                _ => None,
            },
        ),
        plain(
            "native",
            &["dedupsim"],
            "# dedupsim-trace v1, then time_ns op offset size [volume [hashes]] (ns; bytes; R/W/T)",
            TraceFormat::Native,
            |_, _| Box::<super::native::NativeParser>::default(),
        )
        .detect(&[Rule::Signature("# dedupsim-trace"), Rule::Shape { rank: 34, test: super::native::is_line }]),
    ],
);

impl TraceFormat {
    /// Every format, in the order they are listed to users ([`FORMATS`]).
    /// (`csv` is represented by its [`CsvSpec::EXAMPLE`] column map.)
    pub fn all() -> impl Iterator<Item = TraceFormat> {
        FORMATS.iter().map(|e| e.item.format)
    }

    /// This format's [`FORMATS`] line (every variant has one: the
    /// registry's test checks it).
    pub fn registered(self) -> Option<&'static Entry<Registered>> {
        FORMATS.iter().find(|e| std::mem::discriminant(&e.item.format) == std::mem::discriminant(&self))
    }

    /// The name used on the command line, without options (the full name,
    /// options included, is the [`Display`](fmt::Display) form).
    pub fn name(self) -> &'static str {
        self.registered().map_or("unregistered", |e| e.name)
    }

    /// One-line description of the line layout and units (for `--help`).
    pub fn summary(self) -> &'static str {
        self.registered().map_or("", |e| e.about)
    }

    /// The format names, comma-separated (for messages).
    pub fn names() -> String {
        FORMATS.available()
    }
}

impl fmt::Display for TraceFormat {
    /// The full name: `blkparse:Q`, `fio-iolog:ms`, `csv:time=1,...`; the
    /// bare name for the defaults (`blkparse` = `blkparse:D`, `fio-iolog` =
    /// `fio-iolog:us`) and the formats without options.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.registered().and_then(|e| e.item.show_options).and_then(|show| show(*self)) {
            Some(options) => write!(f, "{}:{options}", self.name()),
            None => f.write_str(self.name()),
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
        let Some(e) = FORMATS.iter().find(|e| e.name == lower || e.item.aliases.contains(&lower.as_str())) else {
            return Err(TraceError::UnknownFormat { name: s.to_string(), known: Self::names() });
        };
        match (opts, e.item.options) {
            (None, _) => match e.item.needs_options {
                Some(why) => Err(bad(why.into())),
                None => Ok(e.item.format),
            },
            (Some(o), Some(parse)) => parse(&lower, o).map_err(bad),
            (Some(_), None) => Err(bad(format!("the {lower} format takes no options"))),
        }
    }
}

/// `--format`'s help: `lead`, then every format as [`Registered::usage`]
/// names it, in [`FORMATS`] order (so the help names every format).
pub fn format_help(lead: &str) -> String {
    let names: Vec<&str> =
        FORMATS.iter().map(|e| if e.item.usage.is_empty() { e.name } else { e.item.usage }).collect();
    format!("{lead}: {} (docs/trace-formats.md)", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in TraceFormat::all() {
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
}
