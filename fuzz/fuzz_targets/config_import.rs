//! See `dedupsim_fuzz::check_config_import`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dedupsim_fuzz::check_config_import(data));
