//! The column-mapped CSV reader: after the options byte, the first line is
//! the column map (`time=1,op=2,...`, parsed as `csv:LINE`: a bad map must
//! be an error, never a panic), the rest the trace (see
//! `dedupsim_fuzz::check_trace_reader`).
#![no_main]
use dedupsim::trace::TraceFormat;
use libfuzzer_sys::fuzz_target;
use std::io::Cursor;

fuzz_target!(|data: &[u8]| {
    let Some((&b, rest)) = data.split_first() else { return };
    let Some(nl) = rest.iter().position(|&c| c == b'\n') else { return };
    let Ok(spec) = std::str::from_utf8(&rest[..nl]) else { return };
    let format = match format!("csv:{spec}").parse::<TraceFormat>() {
        Ok(f) => f,
        Err(e) => return drop(e.to_string()),
    };
    // The full name reads back as the same format.
    assert_eq!(format.to_string().parse::<TraceFormat>().ok(), Some(format));
    dedupsim_fuzz::check_trace_reader(Cursor::new(&rest[nl + 1..]), dedupsim_fuzz::options(b, Some(format)), "fuzz.csv")
});
