//! `results.csv` and `results.json`: one row per workload × policy ×
//! parameters, with every metric of the run; merging of cells that are
//! shards of one row (same workload, policy and parameters, different
//! seeds) by merging their histograms and summing their counters.
//!
//! Both files are pure functions of the cell records: no wall-clock time,
//! rows in a fixed order, so the same inputs give byte-identical files.

use super::{params_string, CellRecord, ExperimentError};
use crate::metrics::{Counters, DofStats, LatencyHistogram};
use crate::report::{self, ChipStats, HashStats, RunReport, Summary, Transferred, WearStats};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// One row of the results: a single cell, or the merge of several.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultRow {
    pub experiment: String,
    pub workload: String,
    pub workload_spec: String,
    pub workload_source: String,
    pub policy: String,
    /// Overrides (seed excluded when it was merged over).
    pub params: Vec<(String, String)>,
    /// Seeds of the merged cells (one for a single cell).
    pub seeds: Vec<u64>,
    /// Cache keys of the merged cells.
    pub cells: Vec<String>,
    pub scale: f64,
    /// The (merged) report: histograms merged, percentiles recomputed from
    /// them, counters summed.
    pub report: RunReport,
}

impl ResultRow {
    /// The row of one cell.
    pub fn single(r: &CellRecord) -> ResultRow {
        ResultRow {
            experiment: r.experiment.clone(),
            workload: r.workload.clone(),
            workload_spec: r.workload_spec.clone(),
            workload_source: r.workload_source.clone(),
            policy: r.policy.clone(),
            params: r.params.clone(),
            seeds: vec![r.report.seed],
            cells: vec![r.key.clone()],
            scale: r.scale,
            report: r.report.clone(),
        }
    }
}

/// Groups cells by (experiment, workload spec, policy, params without
/// `seed`), drops exact duplicates (same cache key, e.g. the same cell
/// collected from two shards), and merges each group into one row. Rows
/// come in the order of their first cell.
pub fn merge_records(records: &[CellRecord]) -> Vec<ResultRow> {
    let mut order: Vec<String> = Vec::new();
    let mut groups: BTreeMap<String, Vec<&CellRecord>> = BTreeMap::new();
    for r in records {
        let params: Vec<(String, String)> = r.params.iter().filter(|(k, _)| k != "seed").cloned().collect();
        let gk = format!("{}\n{}\n{}\n{}", r.experiment, r.workload_spec, r.policy, params_string(&params));
        let g = groups.entry(gk.clone()).or_default();
        if g.is_empty() {
            order.push(gk);
        }
        if !g.iter().any(|x| x.key == r.key) {
            g.push(r);
        }
    }
    order
        .iter()
        .map(|gk| {
            let mut g = groups[gk].clone();
            g.sort_by(|a, b| (a.report.seed, &a.key).cmp(&(b.report.seed, &b.key)));
            if g.len() == 1 {
                return ResultRow::single(g[0]);
            }
            let mut row = ResultRow::single(g[0]);
            row.params.retain(|(k, _)| k != "seed");
            row.seeds = g.iter().map(|r| r.report.seed).collect();
            row.cells = g.iter().map(|r| r.key.clone()).collect();
            let reports: Vec<&RunReport> = g.iter().map(|r| &r.report).collect();
            row.report = merge_reports(&reports);
            row
        })
        .collect()
}

/// Merges reports of independent runs (e.g. seeds) into one: latency
/// histograms merged and percentiles recomputed from the merged histograms
/// (never averaged), counters, DOF accumulators and per-chip times summed,
/// rates recomputed from the sums. Policy stats are summed, except
/// high-water marks and sizes (`*high_water*`, `*bytes*`), which take the
/// maximum. Identity fields come from the first report; a merged config
/// hash lists the distinct hashes joined by `+`.
pub fn merge_reports(reports: &[&RunReport]) -> RunReport {
    let Some(first) = reports.first() else { return RunReport::default() };
    let mut m = (*first).clone();
    if reports.len() == 1 {
        return m;
    }
    let mut read = LatencyHistogram::default();
    let mut write = LatencyHistogram::default();
    let mut counters = Counters::default();
    let mut dof = DofStats::default();
    let mut duration = 0.0;
    let mut moved = Transferred::default();
    let mut stats: BTreeMap<String, f64> = BTreeMap::new();
    let mut engine_stats: BTreeMap<String, f64> = BTreeMap::new();
    let mut chips: Vec<ChipStats> = Vec::new();
    let mut wear: BTreeMap<u32, u64> = BTreeMap::new();
    let mut hashes: Vec<String> = Vec::new();
    let mut content_rate = 0.0;
    let mut hash: Option<HashStats> = None;
    for r in reports {
        if let Some(h) = &r.hash {
            let a = hash.get_or_insert_with(|| HashStats { engines: h.engines, ..HashStats::default() });
            a.pages += h.pages;
            a.busy_us += h.busy_us;
            a.wait_us += h.wait_us;
        }
        read.merge(&r.histograms.read);
        write.merge(&r.histograms.write);
        counters.add(&r.counters);
        dof.add(&r.dof);
        duration += r.summary.duration_s;
        // Data moved, recovered from each run's rate and span (the page
        // size is not needed).
        moved.read_mib += r.summary.read_mib_s * r.summary.duration_s;
        moved.write_mib += r.summary.write_mib_s * r.summary.duration_s;
        content_rate += r.content_dedup_rate;
        for (k, v) in &r.policy_stats {
            let e = stats.entry(k.clone()).or_insert(0.0);
            if k.contains("high_water") || k.contains("bytes") {
                *e = e.max(*v);
            } else {
                *e += v;
            }
        }
        for (k, v) in &r.engine_stats {
            let e = engine_stats.entry(k.clone()).or_insert(0.0);
            if k.contains("capacity") || k.contains("peak") || k.contains("selectivity") {
                *e = e.max(*v);
            } else {
                *e += v;
            }
        }
        if chips.len() < r.chips.len() {
            chips.resize(r.chips.len(), ChipStats::default());
        }
        for (a, b) in chips.iter_mut().zip(&r.chips) {
            a.busy_us += b.busy_us;
            a.wait_us += b.wait_us;
        }
        for &(count, blocks) in &r.wear.histogram {
            *wear.entry(count).or_default() += blocks;
        }
        if !hashes.contains(&r.config_hash) {
            hashes.push(r.config_hash.clone());
        }
        m.memory.mapping_bytes = m.memory.mapping_bytes.max(r.memory.mapping_bytes);
        m.memory.fingerprint_index_bytes = m.memory.fingerprint_index_bytes.max(r.memory.fingerprint_index_bytes);
        m.memory.live_pages = m.memory.live_pages.max(r.memory.live_pages);
    }
    for c in &mut chips {
        c.utilization = if duration > 0.0 { c.busy_us / 1e6 / duration } else { 0.0 };
    }
    m.summary = Summary::new(&read, &write, &counters, &dof, duration, moved);
    m.content_dedup_rate = content_rate / reports.len() as f64;
    m.config_hash = hashes.join("+");
    m.counters = counters;
    m.dof = dof;
    m.policy_stats = stats;
    m.engine_stats = engine_stats;
    m.chips = chips;
    m.hash = hash.and_then(|h| HashStats::new(h.engines, h.pages, h.busy_us, h.wait_us, duration));
    m.warnings = m.hash.iter().filter_map(HashStats::saturation_warning).collect();
    m.wear = WearStats::from_histogram(&wear);
    m.histograms.read = read;
    m.histograms.write = write;
    m
}

/// Columns of `results.csv`: the experiment's own, then
/// [`crate::report::csv_header`].
pub fn csv_header() -> Vec<&'static str> {
    let mut h = vec!["experiment", "workload_spec", "scale", "params", "seeds", "cells"];
    h.extend(report::csv_header());
    h
}

fn csv_row(r: &ResultRow) -> Vec<String> {
    let mut row = vec![
        r.experiment.clone(),
        r.workload_spec.clone(),
        format!("{}", r.scale),
        params_string(&r.params),
        r.seeds.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(";"),
        r.cells.join(";"),
    ];
    // The run's own workload name and source columns name the cell's label.
    let mut rep = r.report.csv_row();
    for (col, value) in report::csv_header().iter().zip(rep.iter_mut()) {
        match *col {
            "workload" => value.clone_from(&r.workload),
            "workload_source" => value.clone_from(&r.workload_source),
            _ => {}
        }
    }
    row.extend(rep);
    row
}

/// One row of `results.json`: the report without its histograms (those are
/// in the cell files) plus the experiment's columns.
#[derive(Serialize)]
struct JsonRow<'a> {
    experiment: &'a str,
    workload: &'a str,
    workload_spec: &'a str,
    workload_source: &'a str,
    policy: &'a str,
    params: BTreeMap<&'a str, &'a str>,
    scale: f64,
    seeds: &'a [u64],
    cells: &'a [String],
    dedupsim_version: &'a str,
    config_name: &'a str,
    config_hash: &'a str,
    /// Only for a labelled experiment's run (see `RunReport::device_model`).
    #[serde(skip_serializing_if = "Option::is_none")]
    device_model: Option<&'a str>,
    content_model: &'a str,
    content_dedup_rate: f64,
    summary: &'a report::Summary,
    counters: &'a Counters,
    dof: &'a crate::metrics::DofStats,
    policy_stats: &'a BTreeMap<String, f64>,
    /// The dedup engine and its statistics, for engines other than the
    /// default `caftl` (so default runs' results are unchanged).
    #[serde(skip_serializing_if = "Option::is_none")]
    engine: Option<&'a str>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    engine_stats: &'a BTreeMap<String, f64>,
    chips: &'a [ChipStats],
    wear: &'a WearStats,
    memory: &'a report::MemoryStats,
}

/// Writes `results.csv` and `results.json` into `dir`.
pub fn write(dir: &Path, rows: &[ResultRow]) -> Result<(), ExperimentError> {
    let csv_path = dir.join("results.csv");
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| ExperimentError::Io { path: path.clone(), error }
    };
    let mut buf = Vec::new();
    {
        let mut w = csv::Writer::from_writer(&mut buf);
        let err = |e: csv::Error| ExperimentError::Internal(format!("csv: {e}"));
        w.write_record(csv_header()).map_err(err)?;
        for r in rows {
            w.write_record(csv_row(r)).map_err(err)?;
        }
        w.flush().map_err(io(&csv_path))?;
    }
    crate::output::write_bytes(&csv_path, &buf)?;
    let json: Vec<JsonRow> = rows
        .iter()
        .map(|r| JsonRow {
            experiment: &r.experiment,
            workload: &r.workload,
            workload_spec: &r.workload_spec,
            workload_source: &r.workload_source,
            policy: &r.policy,
            params: r.params.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect(),
            scale: r.scale,
            seeds: &r.seeds,
            cells: &r.cells,
            dedupsim_version: &r.report.dedupsim_version,
            config_name: &r.report.config_name,
            config_hash: &r.report.config_hash,
            device_model: r.report.device_model.as_deref(),
            content_model: &r.report.content_model,
            content_dedup_rate: r.report.content_dedup_rate,
            summary: &r.report.summary,
            counters: &r.report.counters,
            dof: &r.report.dof,
            policy_stats: &r.report.policy_stats,
            engine: (r.report.engine != crate::engine::DEFAULT).then_some(r.report.engine.as_str()),
            engine_stats: &r.report.engine_stats,
            chips: &r.report.chips,
            wear: &r.report.wear,
            memory: &r.report.memory,
        })
        .collect();
    let json_path = dir.join("results.json");
    let text = serde_json::to_string_pretty(&json).map_err(|e| ExperimentError::Internal(e.to_string()))?;
    crate::output::write_bytes(&json_path, (text + "\n").as_bytes())?;
    Ok(())
}

/// Reads every cell file under `dir` (`dir/cells/*.json`, else
/// `dir/*.json`), sorted by file name.
pub fn read_cells(dir: &Path) -> Result<Vec<CellRecord>, ExperimentError> {
    let cells = dir.join("cells");
    let from = if cells.is_dir() { cells } else { dir.to_path_buf() };
    let io = |error| ExperimentError::Io { path: from.clone(), error };
    let mut files: Vec<_> = std::fs::read_dir(&from)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        // Hidden files are not cells (e.g. an output's temporary file).
        .filter(|p| !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
        .filter(|p| !p.file_name().is_some_and(|n| n == "results.json" || n == "timing.json"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        out.push(CellRecord::read(&f)?);
    }
    if out.is_empty() {
        return Err(ExperimentError::NoCells(dir.to_path_buf()));
    }
    Ok(out)
}
