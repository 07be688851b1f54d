//! A reproduction's headline claims on three workload families (issue 24
//! item 5): (a) the Table II replicas the reproduction runs anyway, (b)
//! workloads fitted to the committed profiles of real traces and of the
//! recorded real-content workloads (docs/profiles.md), (c) the recorded
//! workloads themselves (`scripts/record-workloads.sh`, docs/recorded.md),
//! when their traces are given. A claim counts as reproduced only on a
//! workload that was not fitted to it: (b) and (c) were fitted to nothing
//! the papers claim.
//!
//! This module declares the family cells (hidden from the reproduction's
//! own tables) and collects their results; each reproduction writes its own
//! table from them ([`super::fad`]'s "Workload families").

use super::declare::{self, Workload};
use super::workload::{ProfileRef, WorkloadDef, WorkloadSpec};
use super::{CellRecord, ExperimentError};
use crate::profile::Profile;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The real profiles of family (b): the FIU samples, the Plan 9 blocks and
/// the three recorded workloads (built in, [`crate::profile::BUILTIN`]).
pub const FITTED: [&str; 7] =
    ["fiu-homes", "fiu-mail", "fiu-webvm", "plan9-blocks", "recorded-srctree", "recorded-mail", "recorded-vmimages"];

/// Size of a fitted workload: this many requests, unless its pages (read
/// and written) would exceed [`Size::pages`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size {
    pub requests: f64,
    pub pages: f64,
}

impl Size {
    /// `--quick`: small enough for the one-minute budget.
    pub const QUICK: Size = Size { requests: 5_000.0, pages: 200_000.0 };
    /// The full reproduction.
    pub const FULL: Size = Size { requests: 50_000.0, pages: 2_000_000.0 };

    /// The size for a declared reproduction at replica `scale`: `--quick`'s
    /// scale (or below) gives [`Size::QUICK`], anything larger (the default
    /// 0.2 included) [`Size::FULL`].
    pub fn for_scale(scale: f64) -> Size {
        if scale <= super::replica::QUICK_SCALE {
            Size::QUICK
        } else {
            Size::FULL
        }
    }

    /// The scale of `p` that gives this size.
    pub fn scale_of(&self, p: &Profile) -> f64 {
        let s = &p.shape;
        let per_request = s.read_share * s.read_pages.mean + (1.0 - s.read_share) * s.write_pages.mean;
        let n = p.source.requests.max(1) as f64;
        (self.requests / n).min(self.pages / (n * per_request.max(1.0)))
    }
}

/// One workload of a family.
#[derive(Clone, Debug)]
pub struct Member {
    /// `replicas`, `fitted` or `recorded`.
    pub family: &'static str,
    pub def: WorkloadDef,
    /// Config overrides of its cells (a recording replays on an empty
    /// device: `precondition.rule = "none"`).
    pub set: Vec<(String, String)>,
}

impl Member {
    /// The label of its cells.
    pub fn label(&self) -> &str {
        &self.def.label
    }
}

/// Family (b): a workload fitted to each of [`FITTED`], sized by `size`.
pub fn fitted(size: Size) -> Result<Vec<Member>, ExperimentError> {
    FITTED
        .iter()
        .map(|name| {
            let p = Profile::load_named(Path::new(name), &[])
                .map_err(|e| ExperimentError::Workload { workload: name.to_string(), reason: e.to_string() })?;
            let scale = size.scale_of(&p);
            let r = ProfileRef { path: PathBuf::from(name), scale, sets: Vec::new(), streams: None };
            let mut def = WorkloadDef::new(WorkloadSpec::Profile(r));
            def.label = format!("fitted:{name}");
            Ok(Member { family: "fitted", def, set: Vec::new() })
        })
        .collect()
}

/// Family (c): every `*.trace` in `dir` (the output of
/// `scripts/record-workloads.sh`), in name order; an error when there is
/// none.
pub fn recorded(dir: &Path) -> Result<Vec<Member>, ExperimentError> {
    let io = |error: std::io::Error| ExperimentError::Workload {
        workload: dir.display().to_string(),
        reason: format!("--recorded: cannot list the directory: {error}"),
    };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "trace"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(ExperimentError::Workload {
            workload: dir.display().to_string(),
            reason: "--recorded: no *.trace here; scripts/record-workloads.sh --out DIR records them".into(),
        });
    }
    Ok(paths
        .into_iter()
        .map(|p| {
            let mut def = WorkloadDef::new(WorkloadSpec::Trace(p));
            def.label = format!("recorded:{}", def.label);
            Member { family: "recorded", def, set: vec![("precondition.rule".into(), "\"none\"".into())] }
        })
        .collect())
}

/// A sweep of one profile statistic: one member per value, labelled
/// `sweep:KEY=VALUE`, each the profile at `scale` with `key` set.
pub fn sweep(profile: &str, scale: f64, key: &str, values: &[f64]) -> Vec<Member> {
    values
        .iter()
        .map(|v| {
            let r = ProfileRef { path: PathBuf::from(profile), scale, sets: vec![format!("{key}={v}")], streams: None };
            let mut def = WorkloadDef::new(WorkloadSpec::Profile(r));
            def.label = format!("sweep:{key}={v}");
            Member { family: "sweep", def, set: Vec::new() }
        })
        .collect()
}

/// The members' workloads, hidden from the report's own tables, each
/// running `policies` with the member's overrides.
pub fn workloads(members: &[Member], policies: &[&str]) -> Vec<Workload> {
    members
        .iter()
        .map(|m| {
            let set: Vec<(&str, String)> = m.set.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
            let cells = policies.iter().map(|p| declare::Variant::new(*p, p, &set)).collect();
            Workload { shown: false, ..Workload::new(m.def.clone(), cells) }
        })
        .collect()
}

/// What a family table reads from one cell.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Measured {
    pub read_mean_us: f64,
    pub write_mean_us: f64,
    pub dof_read: f64,
    pub read_ratio: f64,
    pub dedup_rate: f64,
    pub requests: u64,
}

/// The cells' results by (workload label, policy, overrides).
pub fn index(records: &[CellRecord]) -> HashMap<(String, String, String), Measured> {
    records
        .iter()
        .map(|r| {
            let s = &r.report.summary;
            let m = Measured {
                read_mean_us: s.read.mean_us,
                write_mean_us: s.write.mean_us,
                dof_read: s.dof_read,
                read_ratio: r.workload_summary.read_ratio,
                dedup_rate: r.workload_summary.dedup_rate,
                requests: r.workload_summary.requests,
            };
            ((r.workload.clone(), r.policy.clone(), r.params_string()), m)
        })
        .collect()
}

/// A member's result under `policy`, if it ran.
pub fn get<'a>(
    index: &'a HashMap<(String, String, String), Measured>,
    m: &Member,
    policy: &str,
) -> Option<&'a Measured> {
    index.get(&(m.label().to_string(), policy.to_string(), super::params_string(&m.set)))
}

/// `a / b − 1` when both are positive (a latency that was measured).
pub fn change(a: f64, b: f64) -> Option<f64> {
    (a > 0.0 && b > 0.0).then(|| a / b - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitted_sizes_respect_both_limits() {
        let members = fitted(Size::QUICK).unwrap();
        assert_eq!(members.len(), FITTED.len());
        for m in &members {
            let WorkloadSpec::Profile(r) = &m.def.spec else { panic!("{:?}", m.def.spec) };
            let p = Profile::load_named(&r.path, &[]).unwrap();
            let requests = p.source.requests as f64 * r.scale;
            assert!(requests <= Size::QUICK.requests * 1.0001, "{}: {requests}", m.label());
            let s = &p.shape;
            let pages = requests * (s.read_share * s.read_pages.mean + (1.0 - s.read_share) * s.write_pages.mean);
            assert!(pages <= Size::QUICK.pages * 1.0001, "{}: {pages} pages", m.label());
            // One of the two limits binds.
            assert!(requests >= Size::QUICK.requests * 0.999 || pages >= Size::QUICK.pages * 0.999, "{}", m.label());
        }
        // The image store's requests are ~440 pages: its page limit binds.
        let v = members.iter().find(|m| m.label() == "fitted:recorded-vmimages").unwrap();
        let WorkloadSpec::Profile(r) = &v.def.spec else { unreachable!() };
        assert!(r.scale < Size::QUICK.requests / 318.0);
    }

    #[test]
    fn recorded_needs_traces_and_replays_on_an_empty_device() {
        let dir = std::env::temp_dir().join(format!("dedupsim-families-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let err = recorded(&dir).unwrap_err().to_string();
        assert!(err.contains("record-workloads.sh"), "{err}");
        std::fs::write(dir.join("b.trace"), "").unwrap();
        std::fs::write(dir.join("a.trace"), "").unwrap();
        std::fs::write(dir.join("a.toml"), "").unwrap();
        let m = recorded(&dir).unwrap();
        assert_eq!(m.iter().map(|m| m.label().to_string()).collect::<Vec<_>>(), ["recorded:a", "recorded:b"]);
        assert_eq!(m[0].set, [("precondition.rule".to_string(), "\"none\"".to_string())]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
