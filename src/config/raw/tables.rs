//! The `[policy.X]` and `[engine.X]` parameter tables: which names exist
//! (from the registries), how deep and how finite their values may be;
//! and `replay.time_scale`'s check.

use super::super::ConfigError;

/// `replay.time_scale` must be a positive finite factor.
pub(crate) fn check_time_scale(s: f64) -> Result<(), ConfigError> {
    if s.is_finite() && s > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::invalid(
            "replay.time_scale",
            format!(
                "replay.time_scale = {s:?}: must be a positive finite factor (1.0 replays at trace speed, 0.5 twice as fast)"
            ),
        ))
    }
}

/// Why `[policy.<name>]` is not a table any policy reads.
pub(super) fn unknown_policy_table(name: &str) -> ConfigError {
    let tables = super::super::setup::policy_tables();
    let list = tables.iter().map(|(t, _)| *t).collect::<Vec<_>>().join(", ");
    let why = if let Some((t, _)) = tables.iter().find(|(_, readers)| readers.contains(&name)) {
        format!("policy `{name}` takes its parameters from [policy.{t}] (--set policy.{t}.<param>=<value>)")
    } else if crate::policy::names().contains(&name) {
        format!("policy `{name}` has no parameters; the parameter tables are: {list}")
    } else {
        format!(
            "no policy is called `{name}`; the parameter tables are: {list} (policies: {})",
            crate::policy::names().join(", ")
        )
    };
    ConfigError::invalid(format!("policy.{name}"), format!("[policy.{name}]: {why}"))
}

/// Checks that every `[policy.<name>]` entry is a table that some policy
/// reads ([`policy_tables`]: a misspelt table would otherwise be silently
/// ignored) and drops empty ones, so an empty `[policy.fad]` section means
/// the same as no section (the policy's defaults) and hashes the same.
pub(crate) fn normalize_policy(policy: toml::Table) -> Result<toml::Table, ConfigError> {
    normalize_tables("policy", policy, |name| {
        if super::super::setup::policy_tables().iter().any(|(t, _)| *t == name) {
            Ok(())
        } else {
            Err(unknown_policy_table(name))
        }
    })
}

/// Checks that every `[engine.<name>]` entry names a registered engine and
/// is a table, and drops empty ones (an empty section means the defaults
/// and hashes the same as none). The parameters themselves are checked when
/// [`Config::validate`] builds each named engine.
pub(crate) fn normalize_engine_tables(engine: toml::Table) -> Result<toml::Table, ConfigError> {
    normalize_tables("engine", engine, |name| {
        if crate::engine::names().contains(&name) {
            Ok(())
        } else {
            Err(ConfigError::invalid(
                format!("engine.{name}"),
                format!(
                    "[engine.{name}]: no dedup engine is called `{name}`; engines: {}",
                    crate::engine::names().join(", ")
                ),
            ))
        }
    })
}

/// How deep a `[section.<name>]` parameter table may nest tables and
/// arrays. Parameters are plain values, so this only turns away input like
/// `--set policy.fad.a.b.c.d.e.f.g.h.i=1`: its `config show` would not load
/// back (the TOML parser limits how deep a document may nest), a crash
/// found by the `config` fuzz target (docs/reliability.md).
const MAX_PARAM_NESTING: usize = 8;

/// Levels of tables and arrays in table `t`, itself included.
fn table_nesting(t: &toml::Table) -> usize {
    1 + t.values().map(nesting).max().unwrap_or(0)
}

/// Levels of tables and arrays in `v` (a plain value is 0).
fn nesting(v: &toml::Value) -> usize {
    match v {
        toml::Value::Table(t) => table_nesting(t),
        toml::Value::Array(a) => 1 + a.iter().map(nesting).max().unwrap_or(0),
        _ => 0,
    }
}

/// The first parameter in `t` (depth first, by key) that is a float other
/// than a finite number, as (dotted key, value).
fn non_finite(t: &toml::Table) -> Option<(String, f64)> {
    fn walk(key: String, v: &toml::Value) -> Option<(String, f64)> {
        match v {
            toml::Value::Float(f) if !f.is_finite() => Some((key, *f)),
            toml::Value::Table(t) => t.iter().find_map(|(k, v)| walk(format!("{key}.{k}"), v)),
            toml::Value::Array(a) => a.iter().enumerate().find_map(|(i, v)| walk(format!("{key}[{i}]"), v)),
            _ => None,
        }
    }
    t.iter().find_map(|(k, v)| walk(k.clone(), v))
}

/// `[section.<name>]` parameter tables: every name must pass `known`, every
/// value must be a table nesting at most [`MAX_PARAM_NESTING`] levels whose
/// numbers are finite (no parameter of a policy or engine can be `nan` or
/// `inf`; a `nan` also made `config show` fail to load back equal, a case
/// the `config` fuzz target found); empty tables are dropped.
fn normalize_tables(
    section: &str,
    tables: toml::Table,
    known: impl Fn(&str) -> Result<(), ConfigError>,
) -> Result<toml::Table, ConfigError> {
    let mut out = toml::Table::new();
    for (name, v) in tables {
        known(&name)?;
        match v {
            toml::Value::Table(t) if t.is_empty() => {}
            toml::Value::Table(t) => {
                let depth = table_nesting(&t);
                if depth > MAX_PARAM_NESTING {
                    return Err(ConfigError::invalid(
                        format!("{section}.{name}"),
                        format!(
                            "[{section}.{name}] nests tables or arrays {depth} levels deep; parameters nest at most \
                             {MAX_PARAM_NESTING} levels (every parameter of a policy or engine is a plain value)"
                        ),
                    ));
                }
                if let Some((key, f)) = non_finite(&t) {
                    return Err(ConfigError::invalid(
                        format!("{section}.{name}.{key}"),
                        format!("[{section}.{name}] {key} = {f}: parameters are finite numbers (not nan or inf)"),
                    ));
                }
                out.insert(name, toml::Value::Table(t));
            }
            other => {
                return Err(ConfigError::invalid(
                    format!("{section}.{name}"),
                    format!(
                        "{section}.{name} = {other}: {section} parameters go in a table, e.g. [{section}.{name}] or --set {section}.{name}.<param>=<value>"
                    ),
                ))
            }
        }
    }
    Ok(out)
}
