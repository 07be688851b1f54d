//! The blkparse parser (the second byte picks the D, Q or C events as the
//! requests) and loader (see `dedupsim_fuzz::check_trace`).
#![no_main]
use dedupsim::trace::blkparse::BlkEvent;
use dedupsim::trace::TraceFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dedupsim_fuzz::check_trace(
    data,
    &[
        TraceFormat::Blkparse(BlkEvent::Dispatch),
        TraceFormat::Blkparse(BlkEvent::Queue),
        TraceFormat::Blkparse(BlkEvent::Complete)
    ],
    "fuzz.blkparse"
));
