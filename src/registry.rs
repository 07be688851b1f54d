//! One registry type for everything looked up by name: placement policies
//! ([`crate::policy::REGISTRY`]), dedup engines ([`crate::engine::REGISTRY`]),
//! trace formats ([`crate::trace::FORMATS`]) and reproduced papers
//! ([`crate::experiment::papers::REGISTRY`]).
//!
//! A registry is data: a `const` slice of [`Entry`]s, one line each (name,
//! one-line description, and what that kind of thing needs: a constructor,
//! a parameter table, a parser). Adding a policy, an engine, a format or a
//! paper is its own file plus one line in its registry; lookups, the
//! listings the CLI prints (`dedupsim policies`, `engines`, the format
//! list in `--help`, `reproduce`) and the "available: ..." of an unknown
//! name's error all read the same slice, so they cannot disagree.
//! `tests/all/registries.rs` checks that names are unique and that every
//! registered name is reachable from the CLI.
//!
//! A leaf: it knows no simulator type.

/// One registered thing: its name (what users type), a one-line
/// description (what the listings print) and the kind's own data `T`.
#[derive(Debug)]
pub struct Entry<T: 'static> {
    pub name: &'static str,
    pub about: &'static str,
    pub item: T,
}

/// A named, ordered list of [`Entry`]s. The order is the order users see.
#[derive(Debug)]
pub struct Registry<T: 'static> {
    /// What is registered, for messages ("policy", "dedup engine").
    pub kind: &'static str,
    pub entries: &'static [Entry<T>],
}

impl<T: 'static> Registry<T> {
    /// A registry of `kind` over `entries`.
    pub const fn new(kind: &'static str, entries: &'static [Entry<T>]) -> Registry<T> {
        Registry { kind, entries }
    }

    /// The entry called `name` (exact match), if any.
    pub fn get(&self, name: &str) -> Option<&'static Entry<T>> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// Whether `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// Every entry, in registry order.
    pub fn iter(&self) -> std::slice::Iter<'static, Entry<T>> {
        self.entries.iter()
    }

    /// Every name, in registry order.
    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|e| e.name).collect()
    }

    /// The names comma-separated (the "available: ..." of error messages).
    pub fn available(&self) -> String {
        self.names().join(", ")
    }

    /// A name registered twice, if any (the registries' test).
    pub fn duplicate(&self) -> Option<&'static str> {
        let names = self.names();
        names.iter().enumerate().find(|&(i, n)| names[..i].contains(n)).map(|(_, n)| *n)
    }

    /// The listing the CLI prints: one line per entry, the name padded to
    /// `width`, then its description.
    pub fn listing(&self, width: usize) -> String {
        self.entries.iter().map(|e| format!("{:<width$} {}\n", e.name, e.about)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{Entry, Registry};

    const R: Registry<u8> = Registry::new(
        "thing",
        &[Entry { name: "a", about: "first", item: 1 }, Entry { name: "bb", about: "second", item: 2 }],
    );

    #[test]
    fn looks_up_lists_and_finds_duplicates() {
        assert_eq!(R.get("bb").map(|e| e.item), Some(2));
        assert!(R.get("c").is_none() && R.contains("a"));
        assert_eq!(R.available(), "a, bb");
        assert_eq!(R.listing(3), "a   first\nbb  second\n");
        assert_eq!(R.duplicate(), None);
        const D: Registry<u8> = Registry::new(
            "thing",
            &[
                Entry { name: "a", about: "", item: 1 },
                Entry { name: "b", about: "", item: 2 },
                Entry { name: "a", about: "", item: 3 },
            ],
        );
        assert_eq!(D.duplicate(), Some("a"));
    }
}
