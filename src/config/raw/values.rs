//! The unit-carrying values of the raw stage ([`RawTime`], [`RawTransfer`],
//! [`RawSize`], [`RawFraction`], [`RawSeed`]): parsed inside their
//! `Deserialize` impls, so a unit mistake is reported by the TOML parser
//! with its line.

use super::super::parse;
use crate::units::Nanos;
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// Shared serde visitor body for string-or-integer unit values.
macro_rules! unit_value {
    ($ty:ident, $inner:ty, $expect:literal, int => $from_int:expr, str => $from_str:expr, ser => $to:expr) => {
        unit_value!($ty, $inner, $expect, int => $from_int, str => $from_str);
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let f: fn(&$inner) -> String = $to;
                s.serialize_str(&f(&self.0))
            }
        }
    };
    ($ty:ident, $inner:ty, $expect:literal, int => $from_int:expr, str => $from_str:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str($expect)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        if v < 0 {
                            return Err(E::custom(format!("{v} is negative; expected {}", $expect)));
                        }
                        self.visit_u64(v as u64)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        let f: fn(u64) -> Result<$inner, String> = $from_int;
                        f(v).map($ty).map_err(E::custom)
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        Err(E::custom(format!("{v} is a float; expected {}", $expect)))
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        let f: fn(&str) -> Result<$inner, String> = $from_str;
                        f(v).map($ty).map_err(E::custom)
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

/// A time: `"20us"`, `"1.5ms"`, `"200 us"` or an integer of nanoseconds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RawTime(pub Nanos);
unit_value!(RawTime, Nanos,
    "a time such as \"20us\" or \"1.5ms\", or an integer of nanoseconds",
    int => |v| Ok(Nanos(v)),
    str => |s| parse::parse_time_ns(s).map(Nanos),
    ser => |n| parse::format_time_ns(n.0));

/// Channel transfer speed in picoseconds per byte: `"25ns/B"` or `"800MB/s"`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RawTransfer(pub u64);
unit_value!(RawTransfer, u64,
    "a transfer speed such as \"25ns/B\" (time per byte) or \"800MB/s\"",
    int => |_| Err("a bare number is ambiguous here: write the time per byte, e.g. \"25ns/B\", or the bus rate, e.g. \"800MB/s\"".into()),
    str => parse::parse_transfer_ps,
    ser => |ps| parse::format_transfer_ps(*ps));

/// A size in bytes: `"4KiB"`, `"16 KiB"` or an integer of bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RawSize(pub u64);
unit_value!(RawSize, u64,
    "a size such as \"4KiB\", or an integer of bytes",
    int => Ok,
    str => parse::parse_size,
    ser => |b| parse::format_size(*b));

/// The random seed: a non-negative integer (or a decimal / `0x` hex string
/// for values above the TOML integer range, 2^63 - 1).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RawSeed(pub u64);
unit_value!(RawSeed, u64,
"a non-negative integer seed",
int => Ok,
str => |s| {
    let t = s.trim();
    match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse::<u64>(),
    }
    .map_err(|_| format!("`{s}` is not a seed: expected a non-negative integer"))
});

/// Seeds that fit a TOML integer are written as integers, larger ones as
/// strings (TOML integers are signed 64-bit).
impl Serialize for RawSeed {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match i64::try_from(self.0) {
            Ok(i) => s.serialize_i64(i),
            Err(_) => s.serialize_str(&self.0.to_string()),
        }
    }
}

/// A fraction: a number (`0.2`) or a percentage string (`"20%"`).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct RawFraction(pub f64);

impl<'de> Deserialize<'de> for RawFraction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawFraction;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a fraction such as 0.2 or \"20%\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawFraction, E> {
                Ok(RawFraction(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawFraction, E> {
                Ok(RawFraction(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawFraction, E> {
                Ok(RawFraction(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawFraction, E> {
                parse::parse_fraction(v).map(RawFraction).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for RawFraction {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}
