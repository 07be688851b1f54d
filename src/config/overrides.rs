//! `--set key=value` overrides, applied to the raw TOML document.
//!
//! Overrides edit the TOML table before it is deserialized, so they go
//! through exactly the same parsing (units, types, unknown keys) as a file,
//! and the unit syntax is the same on the command line as in files
//! (`--set timing.erase=3ms`).

use super::raw::SCHEMA;
use super::ConfigError;

/// Parses a `--set` value: as a TOML value (`4`, `0.5`, `true`, `"x"`,
/// `[1, 2]`), falling back to a plain string (`1.5ms`, `20%`, `closed-loop`)
/// so shell users need not quote strings twice.
fn parse_value(v: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {v}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(v.to_string()))
}

/// Applies one `key=value` override (dotted key path) to a raw document.
///
/// Keys are checked against the config schema: an unknown key is an error
/// listing the valid keys of its section. `policy.<name>.<param>=value`
/// (any depth below `policy.<name>`) is stored untouched for the policy to
/// validate.
pub fn apply_override(doc: &mut toml::Table, arg: &str) -> Result<(), ConfigError> {
    let err = |message: String| ConfigError::Override { arg: arg.to_string(), message };
    let (key, value) =
        arg.split_once('=').ok_or_else(|| err("expected key=value, e.g. --set geometry.channels=4".into()))?;
    let (key, value) = (key.trim(), value.trim());
    if value.is_empty() {
        return Err(err(format!("no value given for `{key}`")));
    }
    // A value is parsed as a TOML document `v = VALUE`: a line break would
    // let a second line through unseen (and be dropped).
    if value.contains(['\n', '\r']) {
        return Err(err(format!("the value of `{key}` contains a line break; give one key=value per --set")));
    }
    let path: Vec<&str> = key.split('.').map(str::trim).collect();
    if path.iter().any(|p| p.is_empty()) {
        return Err(err(format!("`{key}` is not a valid dotted key")));
    }
    let unknown = |key: &str, section: &str, valid: &[&str]| ConfigError::UnknownKey {
        arg: arg.to_string(),
        key: key.to_string(),
        section: if section.is_empty() { String::new() } else { format!(" in [{section}]") },
        valid: valid.join(", "),
    };
    let sections: Vec<&str> = SCHEMA.iter().skip(1).map(|(s, _)| *s).collect();
    let top_level: Vec<&str> = SCHEMA[0].1.iter().chain(&sections).copied().collect();

    let head = path[0];
    if SCHEMA[0].1.contains(&head) {
        if path.len() > 1 {
            return Err(err(format!("`{head}` is a plain value, not a section")));
        }
        doc.insert(head.to_string(), parse_value(value));
        return Ok(());
    }
    let Some(&(section, keys)) = SCHEMA.iter().skip(1).find(|(s, _)| *s == head) else {
        return Err(unknown(key, "", &top_level));
    };
    let tables = section == "policy" || section == "engine";
    let min_depth = if tables { 3 } else { 2 };
    if path.len() < min_depth {
        let example = if tables { format!("{section}.<name>.<param>") } else { format!("{section}.{}", keys[0]) };
        return Err(err(format!("`{key}` is a section; set one of its keys, e.g. {example}=<value>")));
    }
    if !tables && (path.len() > 2 || !keys.contains(&path[1])) {
        let mut e = unknown(key, section, keys);
        if path[1] == "page_transfer" {
            if let ConfigError::UnknownKey { valid, .. } = &mut e {
                valid.push_str(" (page_transfer is derived: geometry.page_size × timing.transfer)");
            }
        }
        return Err(e);
    }
    // Walk/create the nested tables down to the parent of the last segment.
    let mut table = doc;
    for (i, seg) in path[..path.len() - 1].iter().enumerate() {
        let entry = table.entry(seg.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = entry.as_table_mut().ok_or_else(|| {
            err(format!("`{}` is not a table in the document; cannot set `{key}`", path[..=i].join(".")))
        })?;
    }
    table.insert(path[path.len() - 1].to_string(), parse_value(value));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        assert_eq!(parse_value("4"), toml::Value::Integer(4));
        assert_eq!(parse_value("0.5"), toml::Value::Float(0.5));
        assert_eq!(parse_value("true"), toml::Value::Boolean(true));
        assert_eq!(parse_value("\"a b\""), toml::Value::String("a b".into()));
        assert_eq!(parse_value("1.5ms"), toml::Value::String("1.5ms".into()));
        assert_eq!(parse_value("20%"), toml::Value::String("20%".into()));
        assert_eq!(parse_value("closed-loop"), toml::Value::String("closed-loop".into()));
    }

    #[test]
    fn keys() {
        let mut doc = toml::Table::new();
        apply_override(&mut doc, "geometry.channels=4").unwrap();
        apply_override(&mut doc, " seed = 7 ").unwrap();
        apply_override(&mut doc, "policy.fad.threshold=0.5").unwrap();
        assert_eq!(doc["geometry"]["channels"].as_integer(), Some(4));
        assert_eq!(doc["seed"].as_integer(), Some(7));
        assert_eq!(doc["policy"]["fad"]["threshold"].as_float(), Some(0.5));

        let e = apply_override(&mut doc, "geometry.chanels=4").unwrap_err().to_string();
        assert!(e.contains("chanels") && e.contains("chips_per_channel"), "{e}");
        let e = apply_override(&mut doc, "geometri.channels=4").unwrap_err().to_string();
        assert!(e.contains("geometry"), "{e}");
        assert!(apply_override(&mut doc, "geometry=4").is_err());
        assert!(apply_override(&mut doc, "policy.fad=4").is_err());
        assert!(apply_override(&mut doc, "seed.x=4").is_err());
        assert!(apply_override(&mut doc, "seed").is_err());
        assert!(apply_override(&mut doc, "seed=").is_err());
        assert!(apply_override(&mut doc, "geometry..x=1").is_err());
        let e = apply_override(&mut doc, "timing.page_transfer=1us").unwrap_err().to_string();
        assert!(e.contains("derived"), "{e}");
        doc.insert("gc".into(), toml::Value::Integer(1));
        assert!(apply_override(&mut doc, "gc.copyback=false").is_err());
    }

    #[test]
    fn a_line_break_in_a_value_is_an_error() {
        // Before: `channels = 4` applied and the second line silently dropped.
        let mut doc = toml::Table::new();
        let e = apply_override(&mut doc, "geometry.channels=4\ntiming.read=\"1us\"").unwrap_err().to_string();
        assert!(e.contains("contains a line break; give one key=value per --set"), "{e}");
        assert!(apply_override(&mut doc, "geometry.channels=4\r").is_ok(), "trailing white space is trimmed");
        assert!(apply_override(&mut doc, "seed=1\r\n2").is_err());
        assert!(doc.get("geometry").and_then(|g| g.get("channels")).and_then(|c| c.as_integer()) == Some(4));
    }
}
