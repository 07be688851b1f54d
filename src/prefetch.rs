//! A cache-line prefetch hint for the per-page paths that walk tables
//! ahead of use (the replay's prefetch pipeline, the FTL's tables, the
//! engines' indexes, the preconditioning bitmap). Only speed: a prefetch
//! never changes a result.

/// Hints the CPU to fetch `p`'s cache line (no effect on results).
#[inline(always)]
pub fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, even on invalid
    // addresses, and `p` is a valid reference anyway.
    #[allow(unused_unsafe)]
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
