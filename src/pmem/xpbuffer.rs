//! The XPBuffer: a DIMM's on-module buffer of XPLines (Light-Dedup §2.1
//! "I/O with buffers", Figure 1; FAST'20 §3).
//!
//! One LRU of `capacity` XPLines serves both directions, as FAST'20
//! describes it (the read buffer and the write-combining buffer are not
//! separated there either; a choice):
//!
//! * a load of a line in the buffer is a hit; a miss fetches the line from
//!   the media (a media read) and keeps it;
//! * a store to a line in the buffer merges into it; a store that misses
//!   and covers the whole line allocates it without a media read; a partial
//!   store that misses must first read the line (the read-modify-write that
//!   makes `ipmctl` count media reads for writes, Light-Dedup Table 2's
//!   "First Write" reads);
//! * a dirty line leaving the buffer is written to the media whole (one
//!   XPLine); a clean one leaves silently.

use super::device::Category;

/// What a buffer access found.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The line was in the buffer.
    Hit,
    /// The line was fetched (or, for a whole-line store, allocated).
    Miss,
}

#[derive(Copy, Clone, Debug)]
struct Line {
    line: u64,
    stamp: u64,
    dirty: bool,
    category: Category,
}

/// One DIMM's XPBuffer. See the module doc.
#[derive(Clone, Debug)]
pub struct XpBuffer {
    capacity: usize,
    stamp: u64,
    lines: Vec<Line>,
}

impl XpBuffer {
    pub fn new(capacity: u32) -> XpBuffer {
        XpBuffer { capacity: capacity.max(1) as usize, stamp: 0, lines: Vec::with_capacity(capacity as usize) }
    }

    /// Lines held.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Whether XPLine `line` is held.
    pub fn contains(&self, line: u64) -> bool {
        self.lines.iter().any(|l| l.line == line)
    }

    /// Accesses XPLine `line` (a load when `store` is false). Returns what
    /// it found and the category of a dirty line evicted to make room (it
    /// goes to the media). A store marks the line dirty and (re)tags it
    /// with `category`.
    pub fn access(&mut self, line: u64, store: bool, category: Category) -> (Lookup, Option<Category>) {
        self.stamp += 1;
        if let Some(l) = self.lines.iter_mut().find(|l| l.line == line) {
            l.stamp = self.stamp;
            if store {
                l.dirty = true;
                l.category = category;
            }
            return (Lookup::Hit, None);
        }
        let mut evicted = None;
        if self.lines.len() == self.capacity {
            let (i, _) = self.lines.iter().enumerate().min_by_key(|(_, l)| l.stamp).expect("capacity >= 1");
            let old = self.lines.swap_remove(i);
            if old.dirty {
                evicted = Some(old.category);
            }
        }
        self.lines.push(Line { line, stamp: self.stamp, dirty: store, category });
        (Lookup::Miss, evicted)
    }

    /// Writes every dirty line back (returns their categories, in buffer
    /// order) and keeps them clean.
    pub fn flush(&mut self) -> Vec<Category> {
        let mut out = Vec::new();
        for l in &mut self.lines {
            if l.dirty {
                l.dirty = false;
                out.push(l.category);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_eviction_writes_back_only_dirty_lines() {
        let mut b = XpBuffer::new(2);
        assert_eq!(b.access(1, true, Category::Data), (Lookup::Miss, None));
        assert_eq!(b.access(2, false, Category::Meta), (Lookup::Miss, None));
        assert_eq!(b.access(1, false, Category::Data), (Lookup::Hit, None));
        // 2 is the least recently used and clean: dropped silently.
        assert_eq!(b.access(3, false, Category::Meta), (Lookup::Miss, None));
        assert!(!b.contains(2));
        // 1 is now the oldest and dirty: written back.
        assert_eq!(b.access(4, false, Category::Meta), (Lookup::Miss, Some(Category::Data)));
        assert_eq!(b.len(), 2);
        assert_eq!(b.flush(), Vec::<Category>::new());
    }
}
