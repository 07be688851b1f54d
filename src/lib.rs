//! dedupsim: a fast, faithful, trace-driven simulator of deduplicating flash SSDs.
//!
//! See `ARCHITECTURE.md` for the code map and data flow. The simulator core
//! (`geometry`, `timing`, `ftl`, `policy`, `metrics`, `sim`) does no I/O and
//! never reads the wall clock: a run is a pure function of configuration,
//! workload and seed.

pub mod background;
pub mod cluster;
pub mod config;
pub mod content;
pub mod engine;
pub mod experiment;
pub mod fastmap;
pub mod fromfiles;
pub mod ftl;
pub mod geometry;
pub mod lru;
pub mod metrics;
pub mod nvmfs;
pub mod output;
pub mod params;
pub mod plot;
pub mod pmem;
pub mod policy;
pub mod prefetch;
pub mod profile;
pub mod registry;
pub mod reodedup;
pub mod report;
pub mod reqlog;
pub mod runner;
pub mod series;
#[cfg(target_os = "linux")]
pub mod serve;
pub mod sim;
pub mod synth;
pub mod timing;
pub mod trace;
pub mod units;
pub mod workload;
