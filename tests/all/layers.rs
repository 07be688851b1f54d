//! Layers that only point down (issue 25, item 1): every `crate::x` path in
//! `src/` (a `use`, a grouped `use crate::{a, b}`, or a path in code, also
//! reached through `super::`) names a top-level module of a lower layer than
//! its own, as ARCHITECTURE.md's "Layers" table draws them. The table in
//! ARCHITECTURE.md is the only list: this test parses it, so the drawing
//! and the check cannot drift apart.
//!
//! Comments (and doc links in them) and string literals do not count.
//! Items under `#[cfg(test)]` (unit-test modules, test-only helpers, files
//! declared by a `#[cfg(test)] mod x;`) are exempt: they are not compiled
//! into the library, so they cannot make a circle in it, and a unit test of
//! a lower module may build its inputs the way a user does (a `Config`
//! preset resolved into the module's parameters) rather than repeat them.
//! The test-only code is still checked to name modules that exist.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One `crate::` reference: the file, its 1-based line and the module named.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Reference {
    file: String,
    line: usize,
    target: String,
    test_only: bool,
}

/// ARCHITECTURE.md's layer table: module name -> layer number (higher
/// layers sit on top). Lines of the form `N | mod_a, mod_b | description`
/// inside the fenced block that follows the `## Layers` heading.
fn parse_layers(doc: &str) -> Result<BTreeMap<String, u32>, String> {
    let start = doc.find("\n## Layers").ok_or("ARCHITECTURE.md has no `## Layers` section")?;
    let rest = &doc[start..];
    let open = rest.find("```text\n").ok_or("the Layers section has no ```text block")? + "```text\n".len();
    let close = rest[open..].find("```").ok_or("the Layers block is not closed")? + open;
    let mut layers = BTreeMap::new();
    for (i, line) in rest[open..close].lines().enumerate() {
        let mut cols = line.split('|');
        let (Some(n), Some(mods)) = (cols.next(), cols.next()) else { continue };
        let Ok(n) = n.trim().parse::<u32>() else { continue };
        for m in mods.split(',').map(str::trim).filter(|m| !m.is_empty()) {
            if let Some(prev) = layers.insert(m.to_string(), n) {
                return Err(format!("Layers block line {}: `{m}` listed twice (layers {prev} and {n})", i + 1));
            }
        }
    }
    if layers.is_empty() {
        return Err("the Layers block lists no module".into());
    }
    Ok(layers)
}

/// `text` with comments and the contents of string and char literals
/// replaced by spaces (newlines kept, so line numbers stay right).
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(b.len(), |e| i + e);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let (mut depth, mut j) = (1, i + 2);
                while j < b.len() && depth > 0 {
                    if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                        depth += 1;
                        j += 2;
                    } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                        depth -= 1;
                        j += 2;
                    } else {
                        j += 1;
                    }
                }
                blank(&mut out, i, j);
                i = j;
            }
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) =>
            {
                let mut j = i + 1;
                let mut hashes = 0;
                while b.get(j) == Some(&b'#') {
                    hashes += 1;
                    j += 1;
                }
                if b.get(j) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let closing = format!("\"{}", "#".repeat(hashes));
                let end = text[j + 1..].find(&closing).map_or(b.len(), |e| j + 1 + e + closing.len());
                blank(&mut out, j + 1, end.saturating_sub(closing.len()).max(j + 1));
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                blank(&mut out, i + 1, j.min(b.len()));
                i = j + 1;
            }
            b'\'' => {
                // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
                let end = if b.get(i + 1) == Some(&b'\\') {
                    text[i + 2..].find('\'').map(|e| i + 2 + e)
                } else if b.get(i + 2) == Some(&b'\'') {
                    Some(i + 2)
                } else {
                    // Multi-byte UTF-8 char literal, else a lifetime.
                    let c = text[i + 1..].chars().next();
                    c.and_then(|c| (b.get(i + 1 + c.len_utf8()) == Some(&b'\'')).then(|| i + 1 + c.len_utf8()))
                };
                match end {
                    Some(e) => {
                        blank(&mut out, i + 1, e);
                        i = e + 1;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).expect("only ASCII bytes were replaced")
}

/// Byte ranges of items under `#[cfg(test)]` in stripped text, and the
/// names of `#[cfg(test)] mod name;` files they declare.
fn test_items(s: &str) -> (Vec<(usize, usize)>, Vec<String>) {
    let b = s.as_bytes();
    let (mut ranges, mut files) = (Vec::new(), Vec::new());
    let mut from = 0;
    while let Some(p) = s[from..].find("#[cfg(test)]") {
        let start = from + p;
        let after = start + "#[cfg(test)]".len();
        let (end, declared) = item_end(b, after);
        if declared {
            let item = s[after..end - 1].trim();
            if let Some(name) = item.strip_prefix("mod ").or_else(|| item.strip_prefix("pub mod ")) {
                files.push(name.trim().to_string());
            }
        }
        ranges.push((start, end));
        from = end;
    }
    (ranges, files)
}

/// Where the item starting at `from` ends (exclusive): after the `}`
/// closing its first `{`, or after a `;` before any `{` (then `true`: a
/// declaration such as `mod name;`); the text's end if neither comes.
fn item_end(b: &[u8], from: usize) -> (usize, bool) {
    let mut depth = 0usize;
    for (j, &c) in b.iter().enumerate().skip(from) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return (j + 1, false);
                }
            }
            b';' if depth == 0 => return (j + 1, true),
            _ => {}
        }
    }
    (b.len(), false)
}

/// Byte ranges of the inline modules (`mod x { ... }`) of stripped text.
fn inline_mods(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(p) = s[from..].find("mod ") {
        let at = from + p;
        from = at + 4;
        if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
            continue;
        }
        let Some(name) = ident_at(s, from) else { continue };
        let open = from + name.len();
        let rest = s[open..].trim_start();
        if !rest.starts_with('{') {
            continue;
        }
        let (end, _) = item_end(b, open + (s[open..].len() - rest.len()));
        out.push((at, end));
    }
    out
}

fn ident_at(s: &str, at: usize) -> Option<&str> {
    let rest = &s[at..];
    let n = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
    (n > 0).then(|| &rest[..n])
}

/// The top-level modules a grouped `crate::{...}` names (first segment of
/// each top-level entry), `open` being the index of its `{`.
fn group_heads(s: &str, open: usize) -> Vec<(usize, String)> {
    let b = s.as_bytes();
    let mut heads = Vec::new();
    let (mut depth, mut j, mut expect) = (0usize, open, true);
    while j < b.len() {
        match b[j] {
            b'{' => {
                depth += 1;
                j += 1;
                continue;
            }
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            b',' if depth == 1 => expect = true,
            c if depth == 1 && expect && (c.is_ascii_alphabetic() || c == b'_') => {
                if let Some(id) = ident_at(s, j) {
                    heads.push((j, id.to_string()));
                    j += id.len();
                    expect = false;
                    continue;
                }
            }
            _ => {}
        }
        j += 1;
    }
    heads
}

/// Every `crate::` reference of one source file. `depth` is how many
/// `super::` lead from the file's module to the crate root minus one (0
/// for `src/x.rs` and `src/x/mod.rs`, 1 for `src/x/y.rs`, ...): a
/// `super::` chain that reaches the root names a top-level module too.
fn references(file: &str, text: &str, depth: usize, whole_file_test: bool) -> Vec<Reference> {
    let s = strip(text);
    let (tests, _) = test_items(&s);
    let line_of = |at: usize| s[..at].bytes().filter(|&c| c == b'\n').count() + 1;
    let mut refs = Vec::new();
    let mut push = |at: usize, target: &str| {
        if matches!(target, "self" | "super" | "crate") {
            return;
        }
        let test_only = whole_file_test || tests.iter().any(|&(a, z)| (a..z).contains(&at));
        refs.push(Reference { file: file.to_string(), line: line_of(at), target: target.to_string(), test_only });
    };
    let b = s.as_bytes();
    let boundary =
        |at: usize| at == 0 || !(b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_' || b[at - 1] == b'$');
    let mut from = 0;
    while let Some(p) = s[from..].find("crate::") {
        let at = from + p;
        from = at + 7;
        if !boundary(at) {
            continue;
        }
        let next = at + 7;
        if b.get(next) == Some(&b'{') {
            for (pos, id) in group_heads(&s, next) {
                push(pos, &id);
            }
        } else if let Some(id) = ident_at(&s, next) {
            push(at, id);
        }
    }
    // `super::super::...::x` climbing to the crate root: as many `super`
    // as the file is deep, plus one per inline `mod x { ... }` around it.
    let mods = inline_mods(&s);
    let mut from = 0;
    while let Some(p) = s[from..].find("super::") {
        let at = from + p;
        from = at + 7;
        if !boundary(at) || s[..at].ends_with("::") {
            continue;
        }
        let mut k = 1;
        while s[from..].starts_with("super::") {
            from += 7;
            k += 1;
        }
        let inline = mods.iter().filter(|&&(a, z)| (a..z).contains(&at)).count();
        if k != depth + 1 + inline {
            continue;
        }
        if b.get(from) == Some(&b'{') {
            for (pos, id) in group_heads(&s, from) {
                push(pos, &id);
            }
        } else if let Some(id) = ident_at(&s, from) {
            push(at, id);
        }
    }
    refs
}

/// Walks `src/`: every file's references and its top-level module.
fn scan(src: &Path) -> Vec<(String, Reference)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(src, &mut files);
    // Files declared by `#[cfg(test)] mod x;` (the whole file is test code).
    let child_dir = |path: &Path| {
        if path.file_name().is_some_and(|n| n == "mod.rs") {
            path.parent().unwrap().to_path_buf()
        } else {
            path.with_extension("")
        }
    };
    let mut test_files: BTreeSet<PathBuf> = BTreeSet::new();
    for path in &files {
        let (_, declared) = test_items(&strip(&std::fs::read_to_string(path).unwrap()));
        for name in declared {
            test_files.insert(child_dir(path).join(format!("{name}.rs")));
            test_files.insert(child_dir(path).join(&name).join("mod.rs"));
        }
    }
    let mut all = Vec::new();
    for path in &files {
        let rel = path.strip_prefix(src).unwrap();
        let parts: Vec<String> = rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
        if parts == ["lib.rs"] || parts == ["main.rs"] {
            continue;
        }
        let module = parts[0].trim_end_matches(".rs").to_string();
        let is_mod_file = matches!(parts.last().map(String::as_str), Some("mod.rs"));
        let depth = parts.len() - 1 - usize::from(is_mod_file);
        let text = std::fs::read_to_string(path).unwrap();
        let file = format!("src/{}", parts.join("/"));
        let refs = references(&file, &text, depth, test_files.contains(path));
        all.extend(refs.into_iter().map(|r| (module.clone(), r)));
    }
    all
}

/// The violations: references from a module to one of the same or a
/// higher layer (test-only ones exempt), and references to modules the
/// table does not list.
fn violations(layers: &BTreeMap<String, u32>, refs: &[(String, Reference)]) -> Vec<String> {
    let mut out = Vec::new();
    for (module, r) in refs {
        if *module == r.target {
            continue;
        }
        let Some(&mine) = layers.get(module) else {
            out.push(format!("{}:{}: module `{module}` is in no layer of ARCHITECTURE.md", r.file, r.line));
            continue;
        };
        let Some(&theirs) = layers.get(&r.target) else {
            out.push(format!("{}:{}: `crate::{}` is in no layer of ARCHITECTURE.md", r.file, r.line, r.target));
            continue;
        };
        if theirs >= mine && !r.test_only {
            let how = if theirs == mine { "its own layer" } else { "a higher layer" };
            out.push(format!(
                "{}:{}: `{module}` (layer {mine}) uses `crate::{}` ({how}, {theirs})",
                r.file, r.line, r.target
            ));
        }
    }
    out
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn imports_only_point_down_a_layer() {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let layers = parse_layers(&doc).unwrap();
    let refs = scan(&root().join("src"));
    assert!(refs.len() > 100, "the scan found only {} references: is it reading src/?", refs.len());
    // Every top-level module of the library is placed.
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let declared: Vec<&str> =
        lib.lines().filter_map(|l| l.trim().strip_prefix("pub mod ")?.strip_suffix(';')).collect();
    let unplaced: Vec<&&str> = declared.iter().filter(|m| !layers.contains_key(**m)).collect();
    assert!(unplaced.is_empty(), "modules in no layer of ARCHITECTURE.md: {unplaced:?}");
    // And the table names no module that is gone (`cli` is the binary's).
    let stale: Vec<&String> = layers.keys().filter(|m| *m != "cli" && !declared.contains(&m.as_str())).collect();
    assert!(stale.is_empty(), "ARCHITECTURE.md's layers list modules src/lib.rs does not declare: {stale:?}");
    let v = violations(&layers, &refs);
    assert!(v.is_empty(), "{} import(s) point up or sideways a layer:\n{}", v.len(), v.join("\n"));
}

/// The checker can fail: on a deliberate violation in each form it reads.
#[test]
fn the_layer_check_catches_a_violation() {
    let layers = parse_layers("x\n## Layers\n\n```text\n2 | high | h\n1 | low, side | l\n```\n").unwrap();
    assert_eq!(layers["high"], 2);
    let cases = [
        ("use crate::high::Thing;", 0, 1),
        ("use crate::{side, high::Thing};", 0, 2),
        ("fn f() { let x = crate::high::f(); }", 0, 1),
        ("use super::super::high::X;", 1, 1),
        ("use super::high;", 0, 1),
        ("mod inner { use super::super::high; use super::sibling; }", 0, 1),
        ("mod inner { fn f() { super::super::super::high::g(); } }", 1, 1),
        // Not code: comments, doc links and strings.
        ("// crate::high\n/// [`crate::high`]\nfn f() { g(\"crate::high\"); }", 0, 0),
        // Test-only items are exempt, the code after them is not.
        ("#[cfg(test)]\nmod tests { use crate::high; }\nuse crate::high::Y;", 0, 1),
        ("fn f<'a>(c: char) -> bool { c == '{' }\nuse crate::high::Z;", 0, 1),
    ];
    for (text, depth, expected) in cases {
        let refs = references("src/low/x.rs", text, depth, false);
        let refs: Vec<(String, Reference)> = refs.into_iter().map(|r| ("low".to_string(), r)).collect();
        let v = violations(&layers, &refs);
        assert_eq!(v.len(), expected, "{text}: {v:?}");
    }
    // A module of the same layer is not below it either.
    let refs = references("src/low/x.rs", "use crate::side::S;", 0, false);
    let v = violations(&layers, &refs.into_iter().map(|r| ("low".to_string(), r)).collect::<Vec<_>>());
    assert_eq!(v.len(), 1);
    assert!(v[0].contains("its own layer"), "{v:?}");
}
