//! fio's logs: the I/O log (v3 timestamps in us or ms) and the per-I/O
//! log; the second byte picks one (see `dedupsim_fuzz::check_trace`).
#![no_main]
use dedupsim::trace::csv::TimeUnit;
use dedupsim::trace::TraceFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dedupsim_fuzz::check_trace(
    data,
    &[TraceFormat::FioIolog(TimeUnit::Us), TraceFormat::FioIolog(TimeUnit::Ms), TraceFormat::FioLog],
    "fuzz.log"
));
