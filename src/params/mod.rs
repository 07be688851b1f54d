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
