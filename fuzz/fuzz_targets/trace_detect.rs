//! Format auto-detection followed by the detected format's parser and the
//! loader (see `dedupsim_fuzz::check_trace`). The file name `.ascii` breaks
//! the SSDsim/MQSim tie towards SSDsim: the second byte picks the name.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&k, rest)) = data.split_first() else { return };
    let name = if k & 1 == 0 { "fuzz.trace" } else { "fuzz.ascii" };
    dedupsim_fuzz::check_trace(rest, &[], name)
});
