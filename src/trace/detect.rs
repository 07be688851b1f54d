//! Format detection from a trace's first lines, driven by the rules each
//! format's [`FORMATS`] line declares ([`Registered::detect`]), so that a
//! format is recognised by adding its rules to its own line.
//!
//! Detection looks at the first non-blank lines (up to
//! [`DETECT_LINES`](super::DETECT_LINES)):
//! 1. a [`Rule::Signature`] on the first of them (a header only that
//!    format writes: `# dedupsim-trace`, `fio version 3 iolog`) decides;
//! 2. otherwise every non-comment line votes for the first format whose
//!    [`Rule::Shape`] it matches, the shapes of all formats tried in `rank`
//!    order (lowest first), and the format with most votes wins (ties: the
//!    one voted for first), so a single odd first line does not derail
//!    detection;
//! 3. a [`Rule::Refines`] then turns a win of the format it names into its
//!    own if any line voted for it (an FIU file with one homes line is a
//!    homes file: homes lines are FIU lines with more digests).
//!
//! The ranks the formats use: 0 whole-line shapes that contain commas but
//! are not comma-separated (blkparse's `major,minor`); 10-19 comma-separated
//! header lines; 20-29 comma-separated data lines; 30-39 whitespace-separated
//! lines. A comma-separated shape only ever sees lines with a comma
//! ([`Line::fields`] is empty otherwise).
//!
//! [`FORMATS`]: super::FORMATS
//! [`Registered::detect`]: super::Registered::detect

use super::format::{TraceFormat, FORMATS};

/// One line as the shape rules see it.
pub struct Line<'a> {
    /// The line, trimmed.
    pub text: &'a str,
    /// Its comma-separated fields, trimmed; empty if it has no comma.
    pub fields: Vec<&'a str>,
    /// Its whitespace-separated words.
    pub words: Vec<&'a str>,
    /// The trace file's name, lowercase ("" if unknown): only SSDsim's and
    /// MQSim's identical lines need it.
    pub file_name: &'a str,
}

impl<'a> Line<'a> {
    fn new(text: &'a str, file_name: &'a str) -> Line<'a> {
        let fields = if text.contains(',') { text.split(',').map(str::trim).collect() } else { Vec::new() };
        Line { text, fields, words: text.split_whitespace().collect(), file_name }
    }

    /// Comma-separated field `i` is `word` (ASCII case ignored).
    pub fn field_is(&self, i: usize, word: &str) -> bool {
        self.fields.get(i).is_some_and(|x| x.eq_ignore_ascii_case(word))
    }
}

/// How a format is recognised (one or more per [`FORMATS`](super::FORMATS)
/// line; none: never detected, as `csv`).
#[derive(Copy, Clone)]
pub enum Rule {
    /// The first non-blank line starts with this text.
    Signature(&'static str),
    /// A line of this format's shape; shapes are tried in `rank` order
    /// across all formats (module doc).
    Shape { rank: u16, test: ShapeTest },
    /// This format wins over the named one when any line voted for it.
    Refines(TraceFormat),
}

/// A line-shape test ([`Rule::Shape`]).
pub type ShapeTest = fn(&Line) -> bool;

/// A non-negative integer.
pub fn is_uint(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// A decimal number (out-of-range and negative ones included: the parser
/// then says what is wrong with it).
pub fn is_decimal(s: &str) -> bool {
    super::parse::parse_seconds(s) != Err(super::parse::SecondsError::NotANumber)
}

/// Hexadecimal digits.
pub fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `R`/`W` in either case.
pub fn is_rw(s: &str) -> bool {
    matches!(s, "R" | "W" | "r" | "w")
}

/// Every format's rules of one kind, with its format.
fn rules() -> impl Iterator<Item = (TraceFormat, Rule)> {
    FORMATS.iter().flat_map(|e| e.item.detect.iter().map(move |&r| (e.item.format, r)))
}

/// Guesses the format of a trace from its first lines (module doc).
/// `file_name` (e.g. the path's file name) only breaks the SSDsim/MQSim
/// tie. Returns `None` when no line is recognised.
pub fn detect(lines: &[&str], file_name: Option<&str>) -> Option<TraceFormat> {
    let mut non_blank = lines.iter().map(|l| l.trim()).filter(|l| !l.is_empty());
    if let Some(first) = non_blank.clone().next() {
        for (f, r) in rules() {
            if matches!(r, Rule::Signature(s) if first.starts_with(s)) {
                return Some(f);
            }
        }
    }
    let mut shapes: Vec<(u16, TraceFormat, ShapeTest)> = rules()
        .filter_map(|(f, r)| match r {
            Rule::Shape { rank, test } => Some((rank, f, test)),
            _ => None,
        })
        .collect();
    shapes.sort_by_key(|s| s.0);
    let name = file_name.unwrap_or("").to_ascii_lowercase();
    let mut votes: Vec<(TraceFormat, usize)> = Vec::new();
    for text in non_blank.by_ref().filter(|l| !l.starts_with('#')) {
        let line = Line::new(text, &name);
        if let Some(&(_, f, _)) = shapes.iter().find(|(_, _, test)| test(&line)) {
            match votes.iter_mut().find(|(v, _)| *v == f) {
                Some((_, c)) => *c += 1,
                None => votes.push((f, 1)),
            }
        }
    }
    // Most votes; ties go to the format voted for first.
    let mut best: Option<(TraceFormat, usize)> = None;
    for &(f, c) in &votes {
        match best {
            Some((_, bc)) if c <= bc => {}
            _ => best = Some((f, c)),
        }
    }
    let best = best?.0;
    let refined =
        rules().find(|&(f, r)| matches!(r, Rule::Refines(over) if over == best) && votes.iter().any(|(v, _)| *v == f));
    Some(refined.map_or(best, |(f, _)| f))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::blkparse::BlkEvent;
    use crate::trace::csv::TimeUnit;

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
        // Fractional seconds, which the parser reads, are Tencent's too.
        assert_eq!(d("1538323200.25,12345,8,1,1063"), Some(TraceFormat::Tencent));
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

    /// Each registered format that has detection rules and a sample writer
    /// is detected from its own sample lines (SSDsim's under a `*.ascii`
    /// name), and no two shapes share a rank, so the order is the
    /// registry's declaration, not an accident of listing order.
    #[test]
    fn every_format_detects_its_own_sample() {
        let mut ranks: Vec<u16> = rules()
            .filter_map(|(_, r)| match r {
                Rule::Shape { rank, .. } => Some(rank),
                _ => None,
            })
            .collect();
        let n = ranks.len();
        ranks.sort_unstable();
        ranks.dedup();
        assert_eq!(ranks.len(), n, "two detection shapes share a rank");
        let mut checked = 0;
        for e in FORMATS.iter() {
            let (Some((header, write)), false) = (e.item.sample, e.item.detect.is_empty()) else { continue };
            let mut text = header.as_bytes().to_vec();
            for k in 0..4u64 {
                let r = crate::trace::SampleRequest {
                    time: 1_000_000 * k,
                    read: k % 2 == 0,
                    offset: 8192 * (k + 1),
                    size: 4096 * (k + 1),
                };
                write(&mut text, &r).unwrap();
            }
            let text = String::from_utf8(text).unwrap();
            let lines: Vec<&str> = text.lines().take(super::super::DETECT_LINES).collect();
            let name = format!("sample.{}", if e.name == "ssdsim" { "ascii" } else { "txt" });
            assert_eq!(detect(&lines, Some(&name)), Some(e.item.format), "{}: {text}", e.name);
            checked += 1;
        }
        assert!(checked >= 11, "only {checked} formats checked");
    }
}
