//! The integration tests, as one test binary (`cargo test --test all`; one
//! binary links once instead of once per file). Each module is one former
//! `tests/*.rs` file; filter by module, e.g. `cargo test --release --test all
//! trace_formats::`.

mod common;
mod support;

mod cli;
mod cli_specs;
mod cli_trace_input;
mod cluster;
mod config;
mod config_import;
mod ftl_props;
mod har_fcrc;
mod layers;
mod outputs;
mod plot_fromfiles;
mod precondition;
mod profiles;
mod registries;
mod reproduce;
mod round_two;
mod serve;
mod streaming;
mod synth_content;
mod trace_formats;
