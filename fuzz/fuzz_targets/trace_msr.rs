//! The msr trace parser and loader (see `dedupsim_fuzz::check_trace`).
#![no_main]
use dedupsim::trace::TraceFormat;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dedupsim_fuzz::check_trace(data, &[TraceFormat::Msr], "fuzz.csv"));
