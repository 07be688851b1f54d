//! gzip / zstd / plain sniffing and decompression, then detection and
//! loading (see `dedupsim_fuzz::check_decompress`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| dedupsim_fuzz::check_decompress(data));
