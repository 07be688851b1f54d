//! The properties the fuzz targets check (see docs/reliability.md,
//! "Fuzzing"). Every target feeds arbitrary bytes to one parser; a panic,
//! an abort, a hang or a failed assertion here is a bug in dedupsim. Errors
//! returned as values are the expected outcome for bad input.

use dedupsim::content::{try_assign_content, ContentModel};
use dedupsim::synth::{generate, SynthSpec};
use dedupsim::trace::{self, LoadOptions, Loaded, Numbered, TraceFormat, VolumeSelect};
use dedupsim::workload::{Workload, NO_CONTENT};
use std::io::{Cursor, Read};
use std::path::Path;

/// Loader options chosen by one input byte, so every trace target also
/// explores page sizes, volume selection, bad-line skipping, wrapping,
/// capacity limits, request limits and content dropping.
pub fn options(b: u8, format: Option<TraceFormat>) -> LoadOptions {
    LoadOptions {
        format,
        page_size: if b & 1 == 0 { 4096 } else { 16384 },
        volume: match (b >> 1) & 3 {
            0 | 1 => VolumeSelect::All,
            2 => VolumeSelect::Merge,
            _ => VolumeSelect::One(0),
        },
        skip_bad_lines: b & 8 != 0,
        wrap_to_pages: (b & 16 != 0).then_some(1000),
        capacity_pages: (b & 32 != 0).then_some(1 << 20),
        max_requests: (b & 64 != 0).then_some(100),
        ignore_content: b & 128 != 0,
        ..LoadOptions::default()
    }
}

/// Fuzzes one trace format (or detection with `formats` empty): the first
/// byte picks the options (and, with several formats, the second the
/// format), the rest is the trace. Checks: no panic; errors are values; the
/// parsed records survive a native write/read round trip; the built
/// workload is consistent and survives a native round trip too.
pub fn check_trace(data: &[u8], formats: &[TraceFormat], name: &str) {
    let Some((&b, mut rest)) = data.split_first() else { return };
    let format = match formats {
        [] => None,
        [f] => Some(*f),
        _ => {
            let Some((&k, r)) = rest.split_first() else { return };
            rest = r;
            Some(formats[k as usize % formats.len()])
        }
    };
    check_trace_reader(Cursor::new(rest), options(b, format), name);
}

/// [`check_trace`] on a reader (used after decompression).
pub fn check_trace_reader<R: std::io::BufRead>(reader: R, opts: LoadOptions, name: &str) {
    let path = Path::new(name);
    let parsed = match trace::read_records(reader, path, &opts) {
        Ok(p) => p,
        Err(e) => return drop(e.to_string()),
    };
    native_round_trip(&parsed.records);
    match trace::build_workload(parsed, path, &opts) {
        Ok(loaded) => check_loaded(&loaded, &opts),
        Err(e) => drop(e.to_string()),
    }
}

fn records_only(records: &[Numbered]) -> Vec<&trace::TraceRecord> {
    records.iter().map(|(_, r)| r).collect()
}

/// Parsed records written as a native trace read back identical
/// (`trace convert --to native` loses nothing).
pub fn native_round_trip(records: &[Numbered]) {
    let mut buf = Vec::new();
    trace::write_native(records.iter().map(|(_, r)| r), &mut buf).expect("parsed records are writable as native");
    let opts = LoadOptions { format: Some(TraceFormat::Native), ..LoadOptions::default() };
    let back = trace::read_records(Cursor::new(&buf), Path::new("round-trip.trace"), &opts)
        .unwrap_or_else(|e| panic!("native output does not read back: {e}\n{}", String::from_utf8_lossy(&buf)));
    assert_eq!(records_only(&records), records_only(&back.records), "native round trip changed the records");
}

/// Workload invariants, then a native round trip of the workload.
pub fn check_loaded(loaded: &Loaded, opts: &LoadOptions) {
    let w = &loaded.workload;
    check_workload(w);
    if let Some(cap) = opts.capacity_pages {
        assert!(w.lpn_span <= cap, "span {} beyond capacity {cap}", w.lpn_span);
    }
    if let Some(wrap) = opts.wrap_to_pages {
        // Requests are folded into the range (a request may still end past it).
        assert!(w.requests.iter().all(|r| u64::from(r.lpn) < wrap), "a request starts beyond the --wrap range");
    }
    let _ = trace::stats_with_page_size(w, opts.page_size);
    let mut buf = Vec::new();
    trace::write_native_workload(w, opts.page_size, &mut buf).expect("a loaded workload is writable as native");
    let ropts = LoadOptions { format: Some(TraceFormat::Native), page_size: opts.page_size, ..LoadOptions::default() };
    let back = trace::load_from_reader(Cursor::new(&buf), Path::new("round-trip.trace"), &ropts)
        .unwrap_or_else(|e| panic!("a written workload does not load back: {e}"));
    let b = &back.workload;
    assert_eq!(w.requests, b.requests, "native workload round trip changed the requests");
    assert_eq!(w.contents, b.contents, "native workload round trip changed the contents");
}

/// What every workload promises: pages >= 1, spans within `lpn_span`,
/// content indices in range.
pub fn check_workload(w: &Workload) {
    for r in &w.requests {
        assert!(r.pages >= 1, "empty request {r:?}");
        assert!(u64::from(r.lpn) + u64::from(r.pages) <= w.lpn_span, "request {r:?} beyond span {}", w.lpn_span);
        if r.content != NO_CONTENT {
            let end = r.content as usize + r.pages as usize;
            assert!(end <= w.contents.len(), "request {r:?} content beyond {}", w.contents.len());
            assert!(w.contents[r.content as usize..end].iter().all(|c| c.0 < w.content_space));
        }
    }
}

/// Decompression: gzip/zstd/plain bytes through `trace::open::decompress`
/// and the auto-detecting loader. Output is capped at 16 MiB (a small
/// compressed input can expand without bound).
pub fn check_decompress(data: &[u8]) {
    let Some((&b, rest)) = data.split_first() else { return };
    let reader = match trace::open::decompress(Cursor::new(rest)) {
        Ok(r) => r,
        Err(e) => return drop(e.to_string()),
    };
    let capped = std::io::BufReader::new(reader.take(16 << 20));
    check_trace_reader(capped, options(b, None), "fuzz.trace");
}

/// A small workload for content models to fill.
fn small_workload() -> Workload {
    let spec: SynthSpec = "requests=64,read=0.3,size=inv:8,footprint=1MiB,hot=0.2:64KiB".parse().unwrap();
    generate(&spec, 1).unwrap()
}

/// Content spec (`--content`): parse; a valid model prints back to itself
/// and assigns content to a small workload without panicking.
pub fn check_content(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let Ok(m) = s.parse::<ContentModel>() else { return };
    if m.validate().is_err() {
        return;
    }
    let again: ContentModel =
        m.to_string().parse().unwrap_or_else(|e| panic!("{m} (from {s:?}) does not parse back: {e}"));
    assert_eq!(m, again, "Display does not round-trip for {s:?}");
    let mut w = small_workload();
    if let Ok(summary) = try_assign_content(&mut w, &m, 7) {
        assert!((0.0..=1.0).contains(&summary.realized_dedup_rate), "{summary:?}");
        check_workload(&w);
    }
}

/// Synthetic workload spec (`--synth`): parse; a valid spec prints back to
/// itself and (capped at 256 requests) generates a consistent workload.
pub fn check_synth(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let Ok(spec) = s.parse::<SynthSpec>() else { return };
    if !spec.name.contains([',', '=']) {
        let again: SynthSpec =
            spec.to_string().parse().unwrap_or_else(|e| panic!("{spec} (from {s:?}) does not parse back: {e}"));
        assert_eq!(spec, again, "Display does not round-trip for {s:?}");
    }
    let small = SynthSpec { requests: spec.requests.min(256), ..spec };
    let w = generate(&small, 3).unwrap_or_else(|e| panic!("a valid spec {s:?} fails to generate: {e}"));
    check_workload(&w);
    let fp = small.footprint_bytes / u64::from(small.page_size);
    assert!(w.lpn_span <= fp, "span {} beyond the footprint of {fp} pages", w.lpn_span);
}

/// Configuration: TOML text up to the first NUL byte, then NUL-separated
/// `--set` overrides. Checks: no panic; a loaded config validates, its
/// derived values compute, and `config show`'s TOML loads back equal.
pub fn check_config(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let mut parts = s.split('\0');
    let text = parts.next().unwrap_or_default();
    let overrides: Vec<String> = parts.map(str::to_string).collect();
    let config = match dedupsim::config::Config::from_toml_str_with_overrides(text, "fuzz.toml", &overrides) {
        Ok(c) => c,
        Err(e) => return drop(e.to_string()),
    };
    config.validate().expect("a loaded config validates");
    let _ = config.memory_estimate().breakdown();
    let shown = config.show();
    let back = dedupsim::config::Config::from_toml_str(&shown, &config.name)
        .unwrap_or_else(|e| panic!("config show output does not load back: {e}\n{shown}"));
    assert_eq!(config, back, "config show does not round-trip");
}

/// `config import`: arbitrary text as an SSDsim parameter file or an MQSim
/// XML config (the first byte picks detection, `ssdsim` or `mqsim`). An
/// error is the expected outcome for bad input; an import that succeeds
/// writes TOML that loads back to the same config, and lists its notes
/// with a line inside the text.
pub fn check_config_import(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    let format = match pick % 3 {
        0 => None,
        1 => Some("ssdsim"),
        _ => Some("mqsim"),
    };
    let imported = match dedupsim::config::import::import(&text, "fuzz.parameters", format) {
        Ok(i) => i,
        Err(e) => return drop(e.to_string()),
    };
    let back = dedupsim::config::Config::from_toml_str(&imported.toml, "fuzz.parameters")
        .unwrap_or_else(|e| panic!("imported TOML does not load back: {e}\n{}", imported.toml));
    assert_eq!(imported.config, back, "imported TOML loads to another config");
    let lines = text.lines().count().max(1);
    for n in &imported.notes {
        assert!(n.line.is_none_or(|l| l >= 1 && l <= lines), "note line {:?} outside the text: {n:?}", n.line);
    }
}
