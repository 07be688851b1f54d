//! Human-friendly unit parsing and canonical formatting for config values.
//!
//! Parsing is exact: decimals are read as integers scaled by a power of ten,
//! never through `f64`, so `"1.5ms"` is exactly 1_500_000 ns and a formatted
//! value always parses back to the same integer (the TOML round trip and the
//! config hash depend on that).
//!
//! The accepted forms (also documented in `presets/fad-table1.toml`):
//!
//! * times: `"20us"`, `"1.5ms"`, `"200 us"`, `"3s"` (units `ns`, `us`/`µs`,
//!   `ms`, `s`) or a bare TOML integer meaning nanoseconds;
//! * channel transfer: `"25ns/B"` (time per byte, units `ps`..`s`, `/B` or
//!   `/byte`) or a bus rate `"800MB/s"`, `"1.6GB/s"` (decimal megabytes);
//! * sizes: `"4KiB"`, `"16 KiB"`, `"1MiB"`, `"4096B"` or a bare integer of
//!   bytes (`KB`/`MB` are rejected as ambiguous between 1000 and 1024);
//! * fractions: `0.2`, `"20%"`.

/// Picoseconds per unit for time strings.
const TIME_UNITS: &[(&str, u128)] = &[
    ("ps", 1),
    ("ns", 1_000),
    ("us", 1_000_000),
    ("µs", 1_000_000),
    ("μs", 1_000_000),
    ("ms", 1_000_000_000),
    ("s", 1_000_000_000_000),
];

/// An exact non-negative decimal: `mantissa / 10^scale`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Decimal {
    mantissa: u128,
    scale: u32,
}

/// Reads `123`, `1.5`, `.5`, `1_000` exactly. `None` on anything else
/// (signs, exponents, more than 30 significant digits).
fn parse_decimal(s: &str) -> Option<Decimal> {
    let s: String = s.chars().filter(|&c| c != '_').collect();
    let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().all(|c| c.is_ascii_digit())
        || !frac.bytes().all(|c| c.is_ascii_digit())
        || int.len() + frac.len() > 30
    {
        return None;
    }
    let mut mantissa: u128 = 0;
    for c in int.bytes().chain(frac.bytes()) {
        mantissa = mantissa.checked_mul(10)?.checked_add(u128::from(c - b'0'))?;
    }
    Some(Decimal { mantissa, scale: frac.len() as u32 })
}

/// `d × factor`, which must come out integral (`None` if it does not or overflows).
fn scale_exact(d: Decimal, factor: u128) -> Option<u128> {
    let num = d.mantissa.checked_mul(factor)?;
    let den = 10u128.checked_pow(d.scale)?;
    (num % den == 0).then(|| num / den)
}

/// Splits `"1.5 ms"` into `("1.5", "ms")`: the number is the leading run of
/// digits, `.` and `_`.
fn split_number(s: &str) -> (&str, &str) {
    let s = s.trim();
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(s.len());
    (s[..end].trim(), s[end..].trim())
}

fn unit_names(units: &[(&str, u128)]) -> String {
    units.iter().map(|(u, _)| *u).filter(|u| !u.starts_with(['µ', 'μ'])).collect::<Vec<_>>().join(", ")
}

/// Parses a duration string to picoseconds (sub-nanosecond precision is
/// needed for per-byte bus times such as `"1.25ns/B"`).
fn parse_duration_ps(s: &str) -> Result<u128, String> {
    let (num, unit) = split_number(s);
    let d = parse_decimal(num).ok_or_else(|| {
        format!("`{s}` is not a time: expected a non-negative number and a unit, e.g. \"20us\" or \"1.5ms\"")
    })?;
    if unit.is_empty() {
        return Err(format!(
            "`{s}` has no unit: write e.g. \"{num}us\" (units: {}), or a bare TOML integer for nanoseconds",
            unit_names(TIME_UNITS)
        ));
    }
    let factor = TIME_UNITS
        .iter()
        .find(|(u, _)| *u == unit)
        .map(|&(_, f)| f)
        .ok_or_else(|| format!("`{s}`: unknown time unit `{unit}` (units: {})", unit_names(TIME_UNITS)))?;
    scale_exact(d, factor).ok_or_else(|| format!("`{s}`: too precise (below 1 ps) or too large"))
}

/// Parses a time string (`"20us"`, `"1.5ms"`) to integer nanoseconds.
pub fn parse_time_ns(s: &str) -> Result<u64, String> {
    let ps = parse_duration_ps(s)?;
    if ps % 1000 != 0 {
        return Err(format!("`{s}`: simulated times are integer nanoseconds; round to a whole ns"));
    }
    u64::try_from(ps / 1000).map_err(|_| format!("`{s}`: too large"))
}

/// Parses a channel transfer speed to picoseconds per byte: `"25ns/B"`,
/// `"25 ns/byte"`, `"1250ps/B"`, or a rate `"800MB/s"` / `"1.6GB/s"`
/// (decimal units: 800 MB/s = 1250 ps/B; rates that do not divide evenly
/// are rounded to the nearest picosecond).
pub(crate) fn parse_transfer_ps(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let hint = "write the time per byte, e.g. \"25ns/B\", or the bus rate, e.g. \"800MB/s\"";
    if let Some(rate) = t.strip_suffix("/s") {
        let (num, unit) = split_number(rate);
        let bytes_per_unit: u128 = match unit {
            "MB" => 1_000_000,
            "GB" => 1_000_000_000,
            "MiB" | "GiB" | "KB" | "kB" | "KiB" => {
                return Err(format!(
                    "`{s}`: rates are given in decimal MB/s or GB/s (as ONFI and Toggle buses are specified)"
                ))
            }
            _ => return Err(format!("`{s}`: unknown rate unit `{unit}/s`; {hint}")),
        };
        let d = parse_decimal(num).ok_or_else(|| format!("`{s}` is not a rate; {hint}"))?;
        if d.mantissa == 0 {
            return Err(format!("`{s}`: the bus rate must be positive"));
        }
        // ps/B = 1e12 / (rate × bytes_per_unit) with rate = mantissa / 10^scale.
        let num = 10u128
            .checked_pow(d.scale)
            .and_then(|p| p.checked_mul(1_000_000_000_000))
            .ok_or_else(|| format!("`{s}`: too many decimals"))?;
        let den = d.mantissa.checked_mul(bytes_per_unit).ok_or_else(|| format!("`{s}`: too large"))?;
        let ps = (num + den / 2) / den;
        if ps == 0 {
            return Err(format!("`{s}`: faster than 1 ps per byte, which the simulator cannot represent"));
        }
        return u64::try_from(ps).map_err(|_| format!("`{s}`: too slow"));
    }
    let per = ["/B", "/byte", "/Byte"]
        .iter()
        .find_map(|suf| t.strip_suffix(suf))
        .ok_or_else(|| format!("`{s}` is not a transfer speed; {hint}"))?;
    let ps = parse_duration_ps(per)?;
    u64::try_from(ps).map_err(|_| format!("`{s}`: too large"))
}

/// Parses a size string (`"4KiB"`, `"4096B"`, `"4096"`) to bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let (num, unit) = split_number(s);
    let factor: u128 = match unit {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        "K" | "k" | "KB" | "kB" | "M" | "MB" | "G" | "GB" | "T" | "TB" => {
            return Err(format!(
                "`{s}`: `{unit}` is ambiguous (1000 or 1024?); write binary units, e.g. \"4KiB\" = 4096 bytes"
            ))
        }
        _ => return Err(format!("`{s}`: unknown size unit `{unit}` (units: B, KiB, MiB, GiB, TiB)")),
    };
    let d = parse_decimal(num).ok_or_else(|| format!("`{s}` is not a size: expected e.g. \"4KiB\" or 4096"))?;
    let bytes = scale_exact(d, factor).ok_or_else(|| format!("`{s}`: not a whole number of bytes, or too large"))?;
    u64::try_from(bytes).map_err(|_| format!("`{s}`: too large"))
}

/// Parses a fraction string: `"20%"` → 0.2, `"0.2"` → 0.2.
pub(crate) fn parse_fraction(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, div) = match t.strip_suffix('%') {
        Some(p) => (p.trim(), 100.0),
        None => (t, 1.0),
    };
    num.parse::<f64>().map(|v| v / div).map_err(|_| format!("`{s}` is not a fraction: write e.g. 0.2 or \"20%\""))
}

/// Formats `value` (in base units) in `unit` worth `factor` base units,
/// exactly: trailing zeros of the fraction are trimmed (`1.5ms`, `102.4us`).
fn format_exact(value: u128, factor: u128, unit: &str) -> String {
    let int = value / factor;
    let rem = value % factor;
    if rem == 0 {
        return format!("{int}{unit}");
    }
    let width = factor.ilog10() as usize;
    let frac = format!("{rem:0width$}");
    format!("{int}.{}{unit}", frac.trim_end_matches('0'))
}

/// Picks the largest unit not exceeding `ps` (at least `min_unit`).
fn format_ps(ps: u128, min_unit: &str) -> String {
    let units: Vec<&(&str, u128)> = TIME_UNITS.iter().filter(|(u, _)| !u.starts_with(['µ', 'μ'])).collect();
    let min_factor = units.iter().find(|(u, _)| *u == min_unit).map_or(1, |&&(_, f)| f);
    let &&(unit, factor) =
        units.iter().rev().find(|&&&(_, f)| f <= ps.max(min_factor) && f >= min_factor).unwrap_or(&units[0]);
    format_exact(ps, factor, unit)
}

/// Canonical time string: `"20us"`, `"1.5ms"`, `"0ns"`.
pub(crate) fn format_time_ns(ns: u64) -> String {
    format_ps(u128::from(ns) * 1000, "ns")
}

/// Canonical transfer string: `"25ns/B"`, `"1.25ns/B"`, `"500ps/B"`.
pub(crate) fn format_transfer_ps(ps: u64) -> String {
    format!("{}/B", format_ps(u128::from(ps), "ps"))
}

/// Canonical size string: the largest binary unit that divides exactly.
pub(crate) fn format_size(bytes: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes > 0 && bytes % (1u64 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(parse_time_ns("20us"), Ok(20_000));
        assert_eq!(parse_time_ns("200 us"), Ok(200_000));
        assert_eq!(parse_time_ns("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_time_ns("32µs"), Ok(32_000));
        assert_eq!(parse_time_ns("1_000ns"), Ok(1_000));
        assert_eq!(parse_time_ns(".5s"), Ok(500_000_000));
        assert!(parse_time_ns("20").unwrap_err().contains("no unit"));
        assert!(parse_time_ns("20 sec").unwrap_err().contains("unknown time unit"));
        assert!(parse_time_ns("0.5ns").unwrap_err().contains("integer nanoseconds"));
        assert!(parse_time_ns("-1us").is_err());
        assert!(parse_time_ns("1e3us").is_err());
        assert!(parse_time_ns("99999999999999999999999999s").is_err());
        assert!(parse_time_ns("").is_err());
        for ns in [0, 1, 999, 1_000, 20_000, 102_400, 1_500_000, 1_000_000_001, u64::MAX] {
            assert_eq!(parse_time_ns(&format_time_ns(ns)), Ok(ns), "{ns}");
        }
        assert_eq!(format_time_ns(1_500_000), "1.5ms");
        assert_eq!(format_time_ns(102_400), "102.4us");
        assert_eq!(format_time_ns(0), "0ns");
    }

    #[test]
    fn transfers() {
        assert_eq!(parse_transfer_ps("25ns/B"), Ok(25_000));
        assert_eq!(parse_transfer_ps("25 ns/byte"), Ok(25_000));
        assert_eq!(parse_transfer_ps("1.25ns/B"), Ok(1_250));
        assert_eq!(parse_transfer_ps("800MB/s"), Ok(1_250));
        assert_eq!(parse_transfer_ps("1.6GB/s"), Ok(625));
        assert_eq!(parse_transfer_ps("40MB/s"), Ok(25_000));
        assert_eq!(parse_transfer_ps("333MB/s"), Ok(3_003));
        assert!(parse_transfer_ps("0MB/s").is_err());
        assert!(parse_transfer_ps("25ns").is_err());
        assert!(parse_transfer_ps("800MiB/s").is_err());
        for ps in [1, 625, 1_250, 25_000, 1_000_000] {
            assert_eq!(parse_transfer_ps(&format_transfer_ps(ps)), Ok(ps));
        }
        assert_eq!(format_transfer_ps(25_000), "25ns/B");
        assert_eq!(format_transfer_ps(1_250), "1.25ns/B");
        assert_eq!(format_transfer_ps(500), "500ps/B");
    }

    #[test]
    fn sizes_and_fractions() {
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("16 KiB"), Ok(16384));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("0.5KiB"), Ok(512));
        assert!(parse_size("4KB").unwrap_err().contains("ambiguous"));
        assert!(parse_size("0.3B").is_err());
        for b in [0, 1, 4096, 8192, 1 << 20, 3 << 30, 12345] {
            assert_eq!(parse_size(&format_size(b)), Ok(b));
        }
        assert_eq!(parse_fraction("20%"), Ok(0.2));
        assert_eq!(parse_fraction("12.5 %"), Ok(0.125));
        assert_eq!(parse_fraction("0.2"), Ok(0.2));
        assert!(parse_fraction("lots").is_err());
    }
}
