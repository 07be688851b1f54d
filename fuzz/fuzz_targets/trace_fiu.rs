//! The FIU parsers (4 KiB digests and the homes per-sector variant; the
//! second byte picks one) and loader (see `dedupsim_fuzz::check_trace`).
#![no_main]
use dedupsim::trace::TraceFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dedupsim_fuzz::check_trace(
    data,
    &[TraceFormat::Fiu, TraceFormat::FiuHomes],
    "fuzz.blkparse"
));
