//! Parameter values as people write them: times (`"20us"`), sizes
//! (`"4KiB"`), bus speeds (`"25ns/B"`), fractions (`"20%"`), exactly parsed
//! and canonically formatted (`parse.rs`), and parameter tables with the
//! unit in the value (`unit_keys.rs`: `memory = "3MiB"` for `memory_mb`).
//!
//! A leaf: the configuration ([`crate::config`]) and the engines' and
//! policies' own parameter structs both read values through it.

pub(crate) mod parse;
pub mod unit_keys;

pub(crate) use parse::format_time_ns;
pub use parse::parse_size;
/// Parses a time string (`"20us"`, `"1.5ms"`, `"1s"`) to integer nanoseconds.
pub use parse::parse_time_ns;

/// The most bytes [`read_file`] reads: parameter files (sweep files,
/// profiles, peer simulators' configs) are a few KiB.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The bytes of a parameter file, refused past [`MAX_FILE_BYTES`]: a
/// device or an endless stream (`/dev/zero`, a pipe) given by mistake is
/// an error, not an unbounded read that exhausts the memory.
pub fn read_file(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "more than {} MiB, far more than a parameter file holds (a device or an endless stream?)",
            MAX_FILE_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// [`read_file`] as UTF-8 text.
pub fn read_text(path: &std::path::Path) -> std::io::Result<String> {
    String::from_utf8(read_file(path)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
}
