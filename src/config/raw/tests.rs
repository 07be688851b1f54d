use super::super::Config;
use super::tables::unknown_policy_table;
use super::*;

/// Every schema key is accepted by serde, and an unlisted key is not.
#[test]
fn schema_matches_structs() {
    for &(section, keys) in SCHEMA {
        for key in keys {
            let text = if section.is_empty() { format!("{key} = 1") } else { format!("[{section}]\n{key} = 1") };
            if let Err(ConfigError::Parse { message, .. }) = RawConfig::parse(&text, "t") {
                assert!(!message.contains("unknown field"), "{section}.{key}: {message}");
            }
        }
        let text = if section.is_empty() { "bogus = 1".to_string() } else { format!("[{section}]\nbogus = 1") };
        if section != "policy" && section != "engine" {
            assert!(RawConfig::parse(&text, "t").is_err(), "{section}");
        }
    }
    // Every key of a fully populated document is in the schema.
    let full = RawConfig::from_config(&Config::fad_table1());
    let v = toml::Value::try_from(&full).unwrap();
    for (k, v) in v.as_table().unwrap() {
        match v.as_table() {
            Some(t) => {
                let keys = SCHEMA.iter().find(|(s, _)| s == k).unwrap().1;
                for kk in t.keys() {
                    assert!(keys.contains(&kk.as_str()), "{k}.{kk}");
                }
            }
            None => assert!(SCHEMA[0].1.contains(&k.as_str()), "{k}"),
        }
    }
}

#[test]
fn deeply_nested_parameter_tables_are_errors() {
    use crate::config::Config;
    // Found by the `config` fuzz target: such a config loaded, but its
    // `config show` did not load back.
    let deep = format!("policy.fad.{}=1", (0..40).map(|i| format!("k{i}")).collect::<Vec<_>>().join("."));
    let err = Config::from_toml_str_with_overrides("", "t.toml", &[deep]).unwrap_err().to_string();
    assert!(err.contains("nests tables or arrays 40 levels deep"), "{err}");
    let nested_array = format!("[engine.smartdedup]\nx = {}1{}\n", "[".repeat(9), "]".repeat(9));
    let err = Config::from_toml_str(&nested_array, "t.toml").unwrap_err().to_string();
    assert!(err.contains("at most 8 levels"), "{err}");
    // Up to the limit is left to the policy's own parameter check.
    let ok = Config::from_toml_str_with_overrides("", "t.toml", &["policy.fad.a.b.c.d.e.f.g=1".into()]).unwrap();
    let shown = ok.show();
    assert_eq!(Config::from_toml_str(&shown, &ok.name).unwrap(), ok);
}

#[test]
fn non_finite_parameters_are_errors() {
    use crate::config::Config;
    // Found by the `config` fuzz target: `nan` loaded, and its `config
    // show` loaded back unequal (NaN is not equal to itself).
    for (set, msg) in [
        ("policy.fad.rho=nan", "[policy.fad] rho = NaN: parameters are finite numbers"),
        ("policy.har.x.y=-inf", "[policy.har] x.y = -inf: parameters are finite numbers"),
    ] {
        let err = Config::from_toml_str_with_overrides("", "t.toml", &[set.into()]).unwrap_err().to_string();
        assert!(err.contains(msg), "{set}: {err}");
    }
    let err = Config::from_toml_str("[engine.smartdedup]\nx = [1.0, inf]\n", "t.toml").unwrap_err().to_string();
    assert!(err.contains("[engine.smartdedup] x[1] = inf"), "{err}");
    // Finite floats stay (the policy checks their range).
    assert!(Config::from_toml_str_with_overrides("", "t.toml", &["policy.fad.rho=0.3".into()]).is_ok());
}

/// The registry's parameter tables, declared as data; each declared
/// table is the one its policy reads (an unknown key in it is that
/// policy's error), and a policy without one ignores every table.
#[test]
fn policy_tables_are_found_in_the_registry() {
    use crate::policy::{build, PolicyError, REGISTRY};
    let t: Vec<(&str, Vec<&str>)> = super::super::setup::policy_tables();
    let probe = |table: &str| {
        let mut cfg = Config::fad_table1();
        let mut params = toml::Table::new();
        params.insert("dedupsim-probe-not-a-parameter".into(), toml::Value::Boolean(true));
        cfg.policy.insert(table.into(), toml::Value::Table(params));
        cfg
    };
    for e in REGISTRY.iter() {
        let name = e.name;
        match e.item.table {
            Some(table) => assert!(
                matches!(build(name, &probe(table)), Err(PolicyError::Params { policy, .. }) if policy == table),
                "{name} does not read [policy.{table}]"
            ),
            None => {
                for other in REGISTRY.names() {
                    assert!(build(name, &probe(other)).is_ok(), "{name} reads [policy.{other}]");
                }
            }
        }
    }
    assert_eq!(
        t,
        [
            ("har", vec!["har"]),
            ("fcrc", vec!["fcrc"]),
            ("die-hint", vec!["die-hint", "die-hint-dedup"]),
            ("fad", vec!["fad-rpo", "fad-rwpo", "fad-rwpo-rewrite", "fad"]),
            ("reodedup-csr", vec!["reodedup-csr"]),
            ("reodedup-atr", vec!["reodedup-atr"]),
        ]
    );
    let msg = |n: &str| unknown_policy_table(n).to_string();
    assert!(
        msg("fadd").contains("no policy is called `fadd`")
            && msg("fadd").contains("tables are: har, fcrc, die-hint, fad"),
        "{}",
        msg("fadd")
    );
    assert!(msg("fad-rpo").contains("[policy.fad]"), "{}", msg("fad-rpo"));
    assert!(msg("native").contains("no parameters"), "{}", msg("native"));
}

#[test]
fn overlay_merges_sections_and_policy() {
    let base = RawConfig::parse(
        "seed = 1\n[geometry]\nchannels = 8\npages_per_block = 64\n[policy.fad]\na = 1\nb = 2",
        "base",
    )
    .unwrap();
    let top = RawConfig::parse("name = \"x\"\n[geometry]\nchannels = 4\n[policy.fad]\nb = 3", "top").unwrap();
    let m = top.overlay(base);
    assert_eq!(m.seed, Some(RawSeed(1)));
    let g = m.geometry.unwrap();
    assert_eq!((g.channels, g.pages_per_block), (Some(4), Some(64)));
    let fad = m.policy.unwrap()["fad"].as_table().unwrap().clone();
    assert_eq!(fad["a"].as_integer(), Some(1));
    assert_eq!(fad["b"].as_integer(), Some(3));
    assert_eq!(m.name.as_deref(), Some("x"));
}
