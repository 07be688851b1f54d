//! One storage node: its fingerprint index, write buffer and sequential
//! store of chunk slots (see the module documentation of [`super`] for why
//! a store of slots, not a simulated SSD).

use super::layout::LayoutFn;
use super::{ClusterError, ReadModel, WriteMode};
use std::collections::HashMap;

/// Slot of a copy still in the write buffer.
pub const UNPLACED: u32 = u32::MAX;

/// One stored copy of a chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Copy {
    /// Fingerprint of the content it holds now (IRU may update it in place).
    pub fp: u64,
    /// Bytes of the chunk.
    pub bytes: u32,
    /// Slot in the node's store, or [`UNPLACED`] while buffered.
    pub slot: u32,
    /// References from file positions.
    pub refs: u32,
}

/// A file position's reference to a copy on this node.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Ref {
    pub file: u32,
    pub pos: u32,
    pub copy: u32,
}

/// A storage node.
pub struct Node {
    pub id: u32,
    mode: WriteMode,
    buffer_cap: usize,
    window: u32,
    read: ReadModel,
    layout: Option<LayoutFn>,
    /// Seed of the layouts' random choices (ATR's file, §IV-B Step 3).
    seed: u64,
    /// Buffers relocated so far (each layout's seed mixes it in).
    layouts: u64,
    /// Fingerprint -> newest copy holding it.
    index: HashMap<u64, u32>,
    /// IRU remapping index (§IV-C): fingerprint -> (node, copy) elsewhere.
    pub remap: HashMap<u64, (u32, u32)>,
    pub copies: Vec<Copy>,
    /// Slots written so far (the store's tail).
    pub tail: u32,
    /// Copies waiting in the write buffer, in arrival order.
    buffer: Vec<u32>,
    /// (file, copy) references to buffered copies, in arrival order: what
    /// the files look like to CSR/ATR when the buffer is relocated.
    buffer_refs: Vec<(u32, u32)>,
    /// `rewrite`: chunks of a file still expected on this node, and the
    /// ones that arrived (pos, fp, bytes).
    expected: HashMap<u32, u32>,
    pending: HashMap<u32, Vec<(u32, u64, u32)>>,
    /// References made, in the order they were resolved.
    pub refs_out: Vec<Ref>,
    /// Copies written for content the node already held (`rewrite`).
    pub rewritten: u64,
}

impl Node {
    /// A node; `layout` relocates the write buffer (`csr`, `atr`), its
    /// random choices seeded from `seed`, the node id and the buffer's
    /// number.
    pub fn new(
        id: u32,
        mode: WriteMode,
        buffer: u32,
        window: u32,
        read: ReadModel,
        layout: Option<LayoutFn>,
        seed: u64,
    ) -> Node {
        Node {
            id,
            mode,
            buffer_cap: buffer.max(1) as usize,
            window,
            read,
            layout,
            seed,
            layouts: 0,
            index: HashMap::new(),
            remap: HashMap::new(),
            copies: Vec::new(),
            tail: 0,
            buffer: Vec::new(),
            buffer_refs: Vec::new(),
            expected: HashMap::new(),
            pending: HashMap::new(),
            refs_out: Vec::new(),
            rewritten: 0,
        }
    }

    /// The local copy holding `fp`, if any.
    pub fn lookup(&self, fp: u64) -> Option<u32> {
        self.index.get(&fp).copied()
    }

    /// Copies stored (placed or buffered).
    pub fn stored_copies(&self) -> usize {
        self.copies.len()
    }

    /// `rewrite`: `n` more chunks of `file` will arrive on this node.
    pub fn expect(&mut self, file: u32, n: u32) {
        *self.expected.entry(file).or_insert(0) += n;
    }

    /// Writes chunk `pos` of `file` (content `fp`, `bytes` long).
    pub fn write(&mut self, file: u32, pos: u32, fp: u64, bytes: u32) -> Result<(), ClusterError> {
        if self.mode == WriteMode::Rewrite {
            self.pending.entry(file).or_default().push((pos, fp, bytes));
            let left = self.expected.entry(file).or_insert(1);
            *left = left.saturating_sub(1);
            if *left == 0 {
                self.expected.remove(&file);
                self.write_run(file);
            }
            return Ok(());
        }
        let copy = match self.index.get(&fp) {
            Some(&c) => c,
            None => {
                let c = self.new_copy(fp, bytes, UNPLACED);
                self.buffer.push(c);
                c
            }
        };
        self.reference(file, pos, copy);
        if self.copies[copy as usize].slot == UNPLACED {
            self.buffer_refs.push((file, copy));
        }
        if self.buffer.len() >= self.buffer_cap {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes a new copy of `fp` for chunk `pos` of `file` even if the node
    /// holds it (IRU's write to the old node), through the buffer.
    pub fn append(&mut self, file: u32, pos: u32, fp: u64, bytes: u32) -> Result<u32, ClusterError> {
        let c = self.new_copy(fp, bytes, UNPLACED);
        self.buffer.push(c);
        self.reference(file, pos, c);
        self.buffer_refs.push((file, c));
        if self.buffer.len() >= self.buffer_cap {
            self.flush()?;
        }
        Ok(c)
    }

    /// Counts a reference from outside the write path (an IRU dedup hit
    /// through a remapping index).
    pub fn add_ref(&mut self, copy: u32) {
        self.copies[copy as usize].refs += 1;
    }

    /// Drops one reference to `copy` (its file position was updated).
    pub fn release(&mut self, copy: u32) {
        let c = &mut self.copies[copy as usize];
        c.refs = c.refs.saturating_sub(1);
    }

    /// Replaces the content of `copy` in place (IRU, §IV-C Step 1). The old
    /// fingerprint leaves the index; `index_new` says whether this node is
    /// the new content's fingerprint node (else the caller inserts a remap
    /// there).
    pub fn update_in_place(&mut self, copy: u32, fp: u64, index_new: bool) {
        let old = std::mem::replace(&mut self.copies[copy as usize].fp, fp);
        if self.index.get(&old) == Some(&copy) {
            self.index.remove(&old);
        }
        if index_new {
            self.index.insert(fp, copy);
        }
    }

    /// Writes out the whole buffer (and, under `rewrite`, any run still
    /// waiting, in file order).
    pub fn flush(&mut self) -> Result<(), ClusterError> {
        if self.mode == WriteMode::Rewrite {
            let mut files: Vec<u32> = self.pending.keys().copied().collect();
            files.sort_unstable();
            for f in files {
                self.expected.remove(&f);
                self.write_run(f);
            }
        }
        if self.buffer.is_empty() {
            return Ok(());
        }
        let order = match self.layout {
            Some(layout) => self.relocated_order(layout)?,
            None => std::mem::take(&mut self.buffer),
        };
        for c in order {
            self.copies[c as usize].slot = self.tail;
            self.tail += 1;
        }
        self.buffer.clear();
        self.buffer_refs.clear();
        Ok(())
    }

    /// The buffer's copies in the order the layout algorithm chooses. Its
    /// input: every file with a reference to a buffered chunk, in order of
    /// first reference, as the sequence of the buffered chunks it references
    /// (first occurrences, in reference order).
    fn relocated_order(&mut self, layout: LayoutFn) -> Result<Vec<u32>, ClusterError> {
        let mut file_idx: HashMap<u32, usize> = HashMap::new();
        let mut files: Vec<Vec<u64>> = Vec::new();
        let mut seen: std::collections::HashSet<(u32, u32)> = std::collections::HashSet::new();
        for &(f, c) in &self.buffer_refs {
            if !seen.insert((f, c)) {
                continue;
            }
            let i = *file_idx.entry(f).or_insert_with(|| {
                files.push(Vec::new());
                files.len() - 1
            });
            files[i].push(self.copies[c as usize].fp);
        }
        let by_fp: HashMap<u64, u32> = self.buffer.iter().map(|&c| (self.copies[c as usize].fp, c)).collect();
        let original: Vec<u64> = self.buffer.iter().map(|&c| self.copies[c as usize].fp).collect();
        let bad = |reason: String| ClusterError::Layout { node: self.id, mode: self.mode.name(), reason };
        let seed = super::routing::mix64(self.seed ^ (u64::from(self.id) << 40) ^ self.layouts);
        self.layouts += 1;
        let order = layout(&files, &original, seed).map_err(bad)?;
        if order.len() != self.buffer.len() {
            return Err(bad(format!("{} chunks returned for {} buffered", order.len(), self.buffer.len())));
        }
        let mut out = Vec::with_capacity(order.len());
        let mut placed = std::collections::HashSet::with_capacity(order.len());
        for fp in order {
            let c = *by_fp.get(&fp).ok_or_else(|| bad(format!("unknown chunk {fp:#x}")))?;
            if !placed.insert(c) {
                return Err(bad(format!("chunk {fp:#x} placed twice")));
            }
            out.push(c);
        }
        Ok(out)
    }

    fn new_copy(&mut self, fp: u64, bytes: u32, slot: u32) -> u32 {
        let c = self.copies.len() as u32;
        self.copies.push(Copy { fp, bytes, slot, refs: 0 });
        self.index.insert(fp, c);
        c
    }

    fn reference(&mut self, file: u32, pos: u32, copy: u32) {
        self.copies[copy as usize].refs += 1;
        self.refs_out.push(Ref { file, pos, copy });
    }

    /// `rewrite`: the file's chunks on this node as one run (see
    /// [`WriteMode::Rewrite`] for the rule).
    fn write_run(&mut self, file: u32) {
        let Some(items) = self.pending.remove(&file) else { return };
        let n = items.len() as i64;
        // Containers: as runs (a copy outside the run may share its first
        // container, but which containers the run fills depends on how many
        // duplicates are rewritten; rewriting it is the simple safe side).
        let threshold = match self.read {
            ReadModel::Runs | ReadModel::Containers => i64::MAX,
            ReadModel::Window => i64::from(self.tail) - (i64::from(self.window) - n),
        };
        let mut in_run: HashMap<u64, u32> = HashMap::new();
        for (pos, fp, bytes) in items {
            let copy = if let Some(&c) = in_run.get(&fp) {
                c
            } else {
                let near = self.index.get(&fp).copied().filter(|&c| {
                    let s = self.copies[c as usize].slot;
                    s != UNPLACED && i64::from(s) >= threshold
                });
                match near {
                    Some(c) => c,
                    None => {
                        if self.index.contains_key(&fp) {
                            self.rewritten += 1;
                        }
                        let slot = self.tail;
                        self.tail += 1;
                        let c = self.new_copy(fp, bytes, slot);
                        in_run.insert(fp, c);
                        c
                    }
                }
            };
            self.reference(file, pos, copy);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(n: &Node) -> Vec<(u64, u32)> {
        let mut v: Vec<(u64, u32)> = n.copies.iter().map(|c| (c.fp, c.slot)).collect();
        v.sort_by_key(|x| x.1);
        v
    }

    #[test]
    fn a_node_deduplicates_its_own_chunks_in_arrival_order() {
        let mut n = Node::new(0, WriteMode::None, 3, 1024, ReadModel::Runs, None, 0);
        for (pos, fp) in [7u64, 8, 7, 9, 8, 10].into_iter().enumerate() {
            n.write(0, pos as u32, fp, 4096).unwrap();
        }
        n.flush().unwrap();
        assert_eq!(slots(&n), [(7, 0), (8, 1), (9, 2), (10, 3)]);
        assert_eq!(n.refs_out.len(), 6);
        assert_eq!(n.copies[0].refs, 2);
    }

    fn reverse(files: &[Vec<u64>], _: &[u64], _: u64) -> Result<Vec<u64>, String> {
        let mut all: Vec<u64> = Vec::new();
        for f in files {
            for &x in f {
                if !all.contains(&x) {
                    all.push(x);
                }
            }
        }
        all.reverse();
        Ok(all)
    }

    fn drop_one(files: &[Vec<u64>], o: &[u64], seed: u64) -> Result<Vec<u64>, String> {
        let mut v = reverse(files, o, seed)?;
        v.pop();
        Ok(v)
    }

    #[test]
    fn the_layout_orders_each_full_buffer() {
        let mut n = Node::new(0, WriteMode::Csr, 2, 1024, ReadModel::Runs, Some(reverse), 0);
        for (pos, fp) in [1u64, 2, 3].into_iter().enumerate() {
            n.write(0, pos as u32, fp, 4096).unwrap();
        }
        n.flush().unwrap();
        assert_eq!(slots(&n), [(2, 0), (1, 1), (3, 2)]);
        let mut bad = Node::new(3, WriteMode::Atr, 2, 1024, ReadModel::Runs, Some(drop_one), 0);
        bad.write(0, 0, 1, 4096).unwrap();
        let e = bad.write(0, 1, 2, 4096).unwrap_err();
        assert!(e.to_string().contains("node 3: the atr layout"), "{e}");
    }

    #[test]
    fn rewrite_keeps_each_file_one_read_per_node() {
        // Window 4. File 0 = a b c; file 1 = d a (a stored at slot 0, the
        // tail is 3: threshold 3 - (4 - 2) = 1 > 0, so a is rewritten).
        let mut n = Node::new(0, WriteMode::Rewrite, 1024, 4, ReadModel::Window, None, 0);
        n.expect(0, 3);
        n.expect(1, 2);
        n.write(1, 0, 40, 4096).unwrap();
        for (pos, fp) in [10u64, 20, 30].into_iter().enumerate() {
            n.write(0, pos as u32, fp, 4096).unwrap();
        }
        n.write(1, 1, 10, 4096).unwrap();
        assert_eq!(slots(&n), [(10, 0), (20, 1), (30, 2), (40, 3), (10, 4)]);
        assert_eq!(n.rewritten, 1);
        // File 2 = c (slot 2 >= 5 - (4 - 1) = 2): referenced.
        n.expect(2, 1);
        n.write(2, 0, 30, 4096).unwrap();
        assert_eq!(n.tail, 5);
        // Reading in runs, every duplicate outside the run is rewritten.
        let mut r = Node::new(0, WriteMode::Rewrite, 1024, 4, ReadModel::Runs, None, 0);
        r.expect(0, 2);
        r.expect(1, 1);
        r.write(0, 0, 10, 4096).unwrap();
        r.write(0, 1, 10, 4096).unwrap();
        r.write(1, 0, 10, 4096).unwrap();
        assert_eq!((r.tail, r.rewritten), (2, 1));
    }
}
