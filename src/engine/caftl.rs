//! The CAFTL-like engine (FAD §IV-A's dedup model, dedupsim's default):
//! every page of every write is fingerprinted (`dedup.fingerprint`, FAD's
//! 32 µs SHA-1 on the `dedup.hash_engines`), and the fingerprint is looked
//! up in an unbounded in-DRAM index of every stored content's primary copy
//! at no further cost: no metadata flash I/O, no verify read, no background
//! work. The index is the FTL's own ([`crate::ftl::Ftl::find_duplicate`]),
//! which the simulator consults directly for this engine.

use super::{Engine, EngineContext, EngineError, EngineIo, Verdict, WritePage};
use crate::ftl::Ftl;

/// The CAFTL-like engine. See the module doc.
#[derive(Copy, Clone, Debug, Default)]
pub struct Caftl;

impl Caftl {
    /// The engine has no parameters: any key of `[engine.caftl]` is an
    /// error (its costs are `dedup.fingerprint` and `dedup.hash_engines`).
    pub fn build(ctx: &EngineContext) -> Result<Box<dyn Engine>, EngineError> {
        super::no_params(ctx, "caftl")?;
        Ok(Box::new(Caftl))
    }
}

impl Engine for Caftl {
    fn name(&self) -> &'static str {
        "caftl"
    }

    fn uses_ftl_index(&self) -> bool {
        true
    }

    fn lookup(&mut self, ftl: &Ftl, pages: &[WritePage], io: &mut EngineIo) {
        for p in pages {
            io.hashed.push(true);
            io.verdicts.push(match ftl.find_duplicate(p.content) {
                Some(e) => Verdict::Duplicate(e),
                None => Verdict::Unique,
            });
        }
    }
}
