//! `dedupsim config import`: a dedupsim TOML config from a peer simulator's
//! device description: an SSDsim 2.1 parameter file (`ssdsim.rs`) or an
//! MQSim `ssdconfig.xml` (`mqsim.rs`).
//!
//! Each format is one file behind [`PeerFormat`] and one [`REGISTRY`] line.
//! A format reads its file into a [`Draft`]: the dedupsim keys it can set,
//! each with where it came from (a field and its line, or the peer's fixed
//! model, e.g. SSDsim's trace pre-processing), and a [`Note`] for every
//! field whose value dedupsim cannot represent (or that the peer itself
//! never reads). [`import`] renders the draft as TOML laid over the
//! `fad-table1` preset (keys the peer has no equivalent for, such as the
//! dedup hash engine, come from there), with the notes as comments, and
//! loads the result back so that what is written is always a valid config.
//!
//! What each field means was read from the peers' sources in
//! `../shared/peers` (SSDsim 2.1 `initialize.c`, `pagemap.c`, `flash.c`;
//! MQSim `src/ssd`, `src/exec`); docs/config-import.md lists every mapping.

mod mqsim;
mod ssdsim;

use super::{Config, ConfigError};
use std::fmt::Write as _;

/// One peer config format: detects its files and maps their fields.
pub trait PeerFormat: Sync {
    /// True if `text` looks like this format (used when `--from` is not given).
    fn detect(&self, text: &str) -> bool;
    /// Reads `text` (from `origin`, for messages) into a draft.
    fn read(&self, text: &str, origin: &str) -> Result<Draft, ConfigError>;
}

/// The formats `config import` reads: (name for `--from`, description, format).
pub const REGISTRY: &[(&str, &str, &dyn PeerFormat)] = &[
    ("ssdsim", "SSDsim 2.1 parameter file (`key = value;` lines, e.g. page.parameters)", &ssdsim::Ssdsim),
    ("mqsim", "MQSim device config (ssdconfig.xml: <Execution_Parameter_Set>)", &mqsim::Mqsim),
];

/// Why a field is listed instead of (or besides) being mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoteKind {
    /// The value matters to the peer, but dedupsim cannot model it as given.
    NotRepresented,
    /// The peer reads the field but never uses it (or it has no effect with
    /// the other values of this file): nothing is lost.
    NoEffect,
}

/// A field of the peer file that the imported config does not carry over.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    pub kind: NoteKind,
    /// 1-based line of the field (several fields: the first), if known.
    pub line: Option<usize>,
    /// The field(s) and value(s), as the file writes them.
    pub field: String,
    /// Why, and what dedupsim does instead.
    pub why: String,
}

/// A dedupsim key set by an import, with its source.
#[derive(Clone, Debug)]
struct Entry {
    /// TOML table (`""` for top-level keys).
    section: &'static str,
    key: &'static str,
    /// The value as TOML (quoted where it is a string).
    value: String,
    /// Where it comes from (comment).
    from: String,
}

/// What a format read: keys to set and notes; rendered by [`import`].
#[derive(Debug)]
pub struct Draft {
    /// The peer, e.g. "SSDsim 2.1".
    peer: &'static str,
    entries: Vec<Entry>,
    notes: Vec<Note>,
}

impl Draft {
    fn new(peer: &'static str) -> Draft {
        Draft { peer, entries: Vec::new(), notes: Vec::new() }
    }

    /// Sets `section.key` to a TOML value, citing its source.
    fn set(&mut self, section: &'static str, key: &'static str, value: impl Into<String>, from: impl Into<String>) {
        self.entries.retain(|e| !(e.section == section && e.key == key));
        self.entries.push(Entry { section, key, value: value.into(), from: from.into() });
    }

    /// A string value (quoted).
    fn set_str(&mut self, section: &'static str, key: &'static str, value: &str, from: impl Into<String>) {
        self.set(section, key, format!("\"{value}\""), from);
    }

    fn note(&mut self, kind: NoteKind, line: Option<usize>, field: impl Into<String>, why: impl Into<String>) {
        self.notes.push(Note { kind, line, field: field.into(), why: why.into() });
    }
}

/// An imported config: the TOML text and the fields it does not carry over.
#[derive(Debug)]
pub struct Imported {
    /// The format's registry name (`ssdsim`, `mqsim`).
    pub format: &'static str,
    /// The dedupsim TOML (notes included as comments).
    pub toml: String,
    /// Every field not carried over, in file order.
    pub notes: Vec<Note>,
    /// The config the TOML resolves to.
    pub config: Config,
}

/// An import error at a line of the peer file.
pub(crate) fn error(origin: &str, line: Option<usize>, message: impl Into<String>) -> ConfigError {
    let origin = match line {
        Some(l) => format!("{origin}:{l}"),
        None => origin.to_string(),
    };
    ConfigError::Import { origin, message: message.into() }
}

/// Reads a peer config (`format` from [`REGISTRY`], or detected when
/// `None`) and returns the dedupsim TOML. `origin` names the file in
/// messages and in the TOML's header.
pub fn import(text: &str, origin: &str, format: Option<&str>) -> Result<Imported, ConfigError> {
    let (name, fmt) = match format {
        Some(f) => REGISTRY.iter().find(|(n, _, _)| *n == f).map(|(n, _, p)| (*n, *p)).ok_or_else(|| {
            error(
                origin,
                None,
                format!(
                    "unknown format `{f}`; known: {}",
                    REGISTRY.iter().map(|(n, _, _)| *n).collect::<Vec<_>>().join(", ")
                ),
            )
        })?,
        None => REGISTRY.iter().find(|(_, _, p)| p.detect(text)).map(|(n, _, p)| (*n, *p)).ok_or_else(|| {
            error(
                origin,
                None,
                "neither an SSDsim parameter file (`key = value;` lines) nor an MQSim XML config \
                 (<Execution_Parameter_Set>); give --from ssdsim or --from mqsim to force one",
            )
        })?,
    };
    let mut draft = fmt.read(text, origin)?;
    draft.notes.sort_by_key(|n| n.line.unwrap_or(usize::MAX));
    let toml = render(&draft, origin);
    let config = Config::from_toml_str(&toml, origin)
        .map_err(|e| error(origin, None, format!("the imported values are not a simulable dedupsim config: {e}")))?;
    Ok(Imported { format: name, toml, notes: draft.notes, config })
}

/// One note as a line: `line 12: field: why`.
pub fn note_line(n: &Note) -> String {
    match n.line {
        Some(l) => format!("line {l}: {}: {}", n.field, n.why),
        None => format!("{}: {}", n.field, n.why),
    }
}

fn render(d: &Draft, origin: &str) -> String {
    let mut s = String::new();
    let file = origin.rsplit('/').next().unwrap_or(origin);
    let _ = writeln!(s, "# Imported by `dedupsim config import` from the {} config `{file}`.", d.peer);
    s.push_str(
        "# Each key says where it comes from: a field of that file (and its line), or\n\
         # the peer's fixed behaviour (\"model\"), which no field of the file sets.\n\
         # Keys not given here (seed, dedup hashing, replay mode, policy parameters)\n\
         # come from the base preset: the peer has no equivalent.\n",
    );
    for (kind, title) in [
        (
            NoteKind::NotRepresented,
            "Not represented (the peer uses these values; dedupsim cannot model them as given):",
        ),
        (NoteKind::NoEffect, "No effect (the peer reads these but does not use them, or not with this file's values):"),
    ] {
        let notes: Vec<&Note> = d.notes.iter().filter(|n| n.kind == kind).collect();
        if notes.is_empty() {
            continue;
        }
        let _ = writeln!(s, "#\n# {title}");
        for n in notes {
            let _ = writeln!(s, "#   {}", note_line(n));
        }
    }
    s.push_str("\nbase = \"fad-table1\"\n");
    for section in ["", "geometry", "timing", "gc", "precondition"] {
        let entries: Vec<&Entry> = d.entries.iter().filter(|e| e.section == section).collect();
        if entries.is_empty() {
            continue;
        }
        if !section.is_empty() {
            let _ = writeln!(s, "\n[{section}]");
        }
        for e in entries {
            let _ = writeln!(s, "# {}", e.from);
            let _ = writeln!(s, "{} = {}", e.key, e.value);
        }
    }
    s
}

/// Fields matched by name in a peer file: `(name, line, raw value)`; the
/// last of duplicates wins, as in both peers.
#[derive(Debug, Default)]
pub(crate) struct Fields {
    items: Vec<(String, usize, String)>,
    used: Vec<bool>,
}

impl Fields {
    pub(crate) fn push(&mut self, name: &str, line: usize, value: &str) {
        self.items.push((name.to_string(), line, value.trim().to_string()));
        self.used.push(false);
    }

    /// The last occurrence of `name`: (line, value); marks every one used.
    pub(crate) fn get(&mut self, name: &str) -> Option<(usize, String)> {
        let mut found = None;
        for (i, (n, line, v)) in self.items.iter().enumerate() {
            if n == name {
                self.used[i] = true;
                found = Some((*line, v.clone()));
            }
        }
        found
    }

    /// Fields never asked for, in file order.
    pub(crate) fn unused(&self) -> Vec<(String, usize, String)> {
        self.items.iter().zip(&self.used).filter(|(_, u)| !**u).map(|(f, _)| f.clone()).collect()
    }

    /// Names given more than once: (name, lines).
    pub(crate) fn duplicates(&self) -> Vec<(String, Vec<usize>)> {
        let mut out: Vec<(String, Vec<usize>)> = Vec::new();
        for (n, line, _) in &self.items {
            match out.iter_mut().find(|(m, _)| m == n) {
                Some((_, lines)) => lines.push(*line),
                None => out.push((n.clone(), vec![*line])),
            }
        }
        out.retain(|(_, l)| l.len() > 1);
        out
    }
}

/// Notes a field given twice (the peer keeps the last).
pub(crate) fn note_duplicates(d: &mut Draft, f: &Fields) {
    for (name, lines) in f.duplicates() {
        let l: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        d.note(
            NoteKind::NoEffect,
            lines.first().copied(),
            name,
            format!("given on lines {}: the peer and this import use the last", l.join(", ")),
        );
    }
}

/// Blocks below which GC starts, from a fraction of a plane's blocks.
pub(crate) fn blocks_of(fraction: f64, blocks: u32, round_up: bool) -> u32 {
    let x = fraction * f64::from(blocks);
    // Thresholds are given as exact binary fractions in practice (0.03125 x
    // 2048 = 64); a tiny epsilon keeps 0.3 x 2048 = 614.4 from being
    // taken as 614.40000000000003 and rounded the wrong way.
    let v = if round_up { (x - 1e-9).ceil() } else { (x + 1e-9).floor() };
    v.max(0.0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_of_gc_thresholds() {
        assert_eq!(blocks_of(0.03125, 2048, true), 64);
        assert_eq!(blocks_of(0.03125, 2048, false), 64);
        assert_eq!(blocks_of(0.3, 2048, true), 615);
        assert_eq!(blocks_of(0.3, 2048, false), 614);
    }

    #[test]
    fn unknown_format_and_undetectable_text_are_errors() {
        let e = import("hello", "x.txt", None).unwrap_err().to_string();
        assert!(e.starts_with("x.txt: neither an SSDsim"), "{e}");
        let e = import("a=1;", "x.txt", Some("disksim")).unwrap_err().to_string();
        assert!(e.contains("unknown format `disksim`; known: ssdsim, mqsim"), "{e}");
    }
}
