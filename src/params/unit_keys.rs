//! Parameter keys that carry their unit in the value, and the bare-number
//! names they replace (issue 30, "Units").
//!
//! Every size in a config accepts `"4KiB"`-style values and every time
//! `"32us"`-style values (`config::parse`). The engine and policy
//! parameter tables used to take bare floats whose unit was in the name
//! (`memory_mb`, `hash_us`, `idle_ms`, `period_s`); each such parameter now
//! has a unit-bearing name (`memory = "3MiB"`, `hash = "0.31us"`) and keeps
//! its old name as an alias. A table gives one or the other, never both.
//!
//! The typed parameter structs keep the old names (their doc comments and
//! the papers' figures are in those units), so [`resolve`] rewrites a
//! unit-bearing key into its alias before the struct is read, and
//! [`present`] does the reverse for display (`config show`). A table
//! written with the old names reads exactly as before.

use super::parse::{format_size, format_time_ns, parse_size, parse_time_ns};

/// What a unit-bearing key measures.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Quantity {
    /// Bytes (`"3MiB"`, `"512KiB"`, `"4096B"`).
    Size,
    /// Nanoseconds (`"16us"`, `"10ms"`, `"1s"`), at most `max_ns`: the
    /// same bound as the alias, so that the simulated clock cannot
    /// saturate (`crate::background::MAX_HASH_TIME_NS`, ...).
    Time { max_ns: u64 },
}

/// One unit-bearing parameter and its bare-number alias.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct UnitKey {
    /// The unit-bearing name (`memory`).
    pub key: &'static str,
    /// The old name, a bare number (`memory_mb`).
    pub alias: &'static str,
    pub quantity: Quantity,
    /// Bytes or nanoseconds per unit of the alias (2^20 for `memory_mb`).
    pub per_alias: f64,
    /// The alias's unit, for messages (`MiB`, `µs`).
    pub alias_unit: &'static str,
}

impl UnitKey {
    /// A size key whose alias counts `per_alias` bytes.
    pub const fn size(key: &'static str, alias: &'static str, per_alias: f64, alias_unit: &'static str) -> Self {
        UnitKey { key, alias, quantity: Quantity::Size, per_alias, alias_unit }
    }

    /// A time key at most `max_ns`, whose alias counts `per_alias` ns.
    pub const fn time(
        key: &'static str,
        alias: &'static str,
        max_ns: u64,
        per_alias: f64,
        alias_unit: &'static str,
    ) -> Self {
        UnitKey { key, alias, quantity: Quantity::Time { max_ns }, per_alias, alias_unit }
    }

    /// An example value for messages.
    fn example(&self) -> &'static str {
        match self.quantity {
            Quantity::Size => "\"3MiB\"",
            Quantity::Time { .. } => "\"16us\"",
        }
    }

    /// The value of `self.key` in bytes or nanoseconds.
    fn read(&self, v: &toml::Value) -> Result<u64, String> {
        let key = self.key;
        let s = match v {
            toml::Value::String(s) => s,
            toml::Value::Integer(_) | toml::Value::Float(_) => {
                return Err(format!(
                    "{key} = {v}: give a unit, e.g. {key} = {} (or the old key {} = {v}, in {})",
                    self.example(),
                    self.alias,
                    self.alias_unit
                ))
            }
            other => return Err(format!("{key} = {other}: expected a string with a unit, e.g. {}", self.example())),
        };
        match self.quantity {
            Quantity::Size => parse_size(s).map_err(|e| format!("{key}: {e}")),
            Quantity::Time { max_ns } => {
                let ns = parse_time_ns(s).map_err(|e| format!("{key}: {e}"))?;
                if ns > max_ns {
                    return Err(format!(
                        "{key} = \"{s}\": more than {}; simulated time would saturate",
                        format_time_ns(max_ns)
                    ));
                }
                Ok(ns)
            }
        }
    }
}

/// Rewrites every unit-bearing key of `table` (`memory = "3MiB"`) into its
/// alias (`memory_mb = 3.0`), which the typed parameters read. Both names
/// in one table, or a value without a unit, are errors naming the key.
pub fn resolve(table: &toml::Value, keys: &[UnitKey]) -> Result<toml::Value, String> {
    let toml::Value::Table(t) = table else { return Ok(table.clone()) };
    let mut out = t.clone();
    for k in keys {
        let Some(v) = out.remove(k.key) else { continue };
        if out.contains_key(k.alias) {
            return Err(format!(
                "both `{}` and `{}` (its old name, in {}) are given; give only one",
                k.key, k.alias, k.alias_unit
            ));
        }
        let base = k.read(&v)?;
        out.insert(k.alias.to_string(), toml::Value::Float(base as f64 / k.per_alias));
    }
    Ok(toml::Value::Table(out))
}

/// Rewrites every alias of `table` (`memory_mb = 3.0`) into its
/// unit-bearing key (`memory = "3MiB"`) where the value is a whole number
/// of bytes or nanoseconds; other values keep their alias.
pub fn present(table: &mut toml::Table, keys: &[UnitKey]) {
    for k in keys {
        let Some(x) = table.get(k.alias).and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64))) else {
            continue;
        };
        let base = x * k.per_alias;
        let whole = base.round();
        if !(0.0..1.8e19).contains(&whole) || (base - whole).abs() > 1e-6 * whole.max(1.0) {
            continue;
        }
        let text = match k.quantity {
            Quantity::Size => format_size(whole as u64),
            Quantity::Time { .. } => format_time_ns(whole as u64),
        };
        table.remove(k.alias);
        table.insert(k.key.to_string(), toml::Value::String(text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: &[UnitKey] = &[
        UnitKey::size("memory", "memory_mb", 1048576.0, "MiB"),
        UnitKey::time("hash", "hash_us", 1_000_000_000, 1e3, "µs"),
    ];

    fn table(s: &str) -> toml::Value {
        toml::Value::Table(s.parse::<toml::Table>().unwrap())
    }

    #[test]
    fn unit_keys_become_their_aliases() {
        let t = resolve(&table("memory = \"3MiB\"\nhash = \"0.31us\"\nother = 1"), KEYS).unwrap();
        assert_eq!(t, table("memory_mb = 3.0\nhash_us = 0.31\nother = 1"));
        // Old names pass unchanged.
        let old = table("memory_mb = 200\nhash_us = 16.0");
        assert_eq!(resolve(&old, KEYS).unwrap(), old);
    }

    #[test]
    fn both_names_no_unit_or_beyond_the_bound_are_errors() {
        let e = resolve(&table("memory = \"3MiB\"\nmemory_mb = 3.0"), KEYS).unwrap_err();
        assert!(e.contains("both `memory` and `memory_mb`"), "{e}");
        let e = resolve(&table("hash = 16"), KEYS).unwrap_err();
        assert!(e.contains("give a unit") && e.contains("hash_us = 16"), "{e}");
        let e = resolve(&table("hash = \"2s\""), KEYS).unwrap_err();
        assert!(e.contains("more than 1s") && e.contains("saturate"), "{e}");
        let e = resolve(&table("memory = \"3MB\""), KEYS).unwrap_err();
        assert!(e.contains("ambiguous"), "{e}");
    }

    #[test]
    fn present_round_trips() {
        let mut t: toml::Table = "memory_mb = 0.5\nhash_us = 0.31\nother = 1".parse().unwrap();
        present(&mut t, KEYS);
        assert_eq!(t, "memory = \"512KiB\"\nhash = \"310ns\"\nother = 1".parse::<toml::Table>().unwrap());
        assert_eq!(resolve(&toml::Value::Table(t), KEYS).unwrap(), table("memory_mb = 0.5\nhash_us = 0.31\nother = 1"));
    }
}
