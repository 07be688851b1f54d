//! `dedupsim config import`: a peer simulator's device config as a dedupsim
//! TOML (the mapping lives in `dedupsim::config::import`).

use super::common;
use anyhow::{Context, Result};
use clap::Args;
use dedupsim::config::import::{self, NoteKind};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The peer's config: an SSDsim 2.1 parameter file or an MQSim ssdconfig.xml (detected from
    /// its content).
    pub file: PathBuf,
    /// Write the TOML here (default: standard output).
    #[arg(short = 'o', long = "out", value_name = "OUT")]
    pub out: Option<PathBuf>,
    /// Read FILE as this format instead of detecting it.
    #[arg(long = "from", value_parser = ["ssdsim", "mqsim"])]
    pub from: Option<String>,
}

pub fn import(a: ImportArgs) -> Result<()> {
    if let Some(out) = &a.out {
        common::check_outputs(&[("FILE", a.file.as_path())], &[("-o", out.as_path())])?;
    }
    let bytes = dedupsim::params::read_file(&a.file).with_context(|| format!("cannot read {}", a.file.display()))?;
    // SSDsim's files carry comments in GBK; only ASCII fields are read.
    let text = String::from_utf8_lossy(&bytes);
    let origin = a.file.display().to_string();
    let imported = import::import(&text, &origin, a.from.as_deref())?;
    let n_rep = imported.notes.iter().filter(|n| n.kind == NoteKind::NotRepresented).count();
    eprintln!(
        "config import: {origin} read as {}; {n_rep} field(s) not represented, {} without effect (listed in the \
         TOML's header too):",
        imported.format,
        imported.notes.len() - n_rep
    );
    for n in &imported.notes {
        let tag = match n.kind {
            NoteKind::NotRepresented => "not represented",
            NoteKind::NoEffect => "no effect",
        };
        eprintln!("  {tag}: {}", import::note_line(n));
    }
    match &a.out {
        Some(out) if out.as_os_str() != "-" => {
            dedupsim::output::write_bytes(out, imported.toml.as_bytes())?;
            eprintln!("config import: wrote {}", out.display());
            Ok(())
        }
        _ => common::out(&imported.toml),
    }
}
