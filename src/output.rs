//! Output files written whole or not at all.
//!
//! Every file dedupsim writes (run reports, traces, experiment results,
//! plots) goes through [`write_file`] or [`replace_file`]: the content is
//! written to a temporary file beside the target (same directory, so the
//! rename cannot cross file systems), flushed, synced and renamed over the
//! target only when every write succeeded. A failure (disk full, I/O
//! error, a writer's own error) is returned naming the path, the temporary
//! file is removed and a previous file at the target is left as it was.
//!
//! A target that exists and is not a regular file (`/dev/null`,
//! `/dev/stdout`, a FIFO) cannot be replaced by a rename: it is opened and
//! written directly, still with every error (the final flush included)
//! reported. A symbolic link is followed, so the file it points to is
//! replaced and the link kept.
//!
//! This module does I/O: it is for the CLI and the experiment drivers, never
//! for the simulator core.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// An output file could not be written (or replaced).
#[derive(Debug, thiserror::Error)]
#[error("writing {}: {source}", path.display())]
pub struct OutputError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

impl OutputError {
    pub fn new(path: &Path, source: io::Error) -> OutputError {
        OutputError { path: path.to_path_buf(), source }
    }
}

/// Where the content goes: a temporary file renamed over `target`, or the
/// existing special file itself.
enum Dest {
    Replace { target: PathBuf, tmp: PathBuf },
    Direct(PathBuf),
}

/// A temporary name beside `target`, hidden and unique within this process:
/// `.NAME.tmp.PID.N`, or with `keep_ext` `.STEM.tmp.PID.N.EXT` for writers
/// that choose the format by extension (the PNG encoder). By default the
/// extension is not kept, so that a temporary file a killed process left
/// behind never looks like an output (e.g. a `*.json` cell file).
fn temp_beside(target: &Path, keep_ext: bool) -> Result<PathBuf, OutputError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .ok_or_else(|| OutputError::new(target, io::Error::new(io::ErrorKind::InvalidInput, "not a file name")))?;
    let unique = format!(".tmp.{}.{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
    let mut tmp = std::ffi::OsString::from(".");
    match (keep_ext, Path::new(name).file_stem(), Path::new(name).extension()) {
        (true, Some(stem), Some(ext)) => {
            tmp.push(stem);
            tmp.push(unique);
            tmp.push(".");
            tmp.push(ext);
        }
        _ => {
            tmp.push(name);
            tmp.push(unique);
        }
    }
    Ok(target.with_file_name(tmp))
}

fn destination(path: &Path, keep_ext: bool) -> Result<Dest, OutputError> {
    // `-` is standard output, for every output flag.
    if path.as_os_str() == "-" {
        return Ok(Dest::Direct(PathBuf::from("/dev/stdout")));
    }
    match std::fs::metadata(path) {
        // Follows symbolic links: a link to a regular file replaces the file.
        Ok(m) if !m.is_file() && !m.is_dir() => Ok(Dest::Direct(path.to_path_buf())),
        Ok(m) if m.is_dir() => {
            Err(OutputError::new(path, io::Error::new(io::ErrorKind::IsADirectory, "is a directory")))
        }
        Ok(_) => {
            let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
            let target = if is_link {
                std::fs::canonicalize(path).map_err(|e| OutputError::new(path, e))?
            } else {
                path.to_path_buf()
            };
            let tmp = temp_beside(&target, keep_ext)?;
            Ok(Dest::Replace { target, tmp })
        }
        Err(_) => Ok(Dest::Replace { target: path.to_path_buf(), tmp: temp_beside(path, keep_ext)? }),
    }
}

/// Checks, before any work, that `path` could be written at the end: a
/// temporary file is created beside it (where [`write_file`] would create
/// one) and removed again, so that a read-only file system, a missing
/// permission or a name too long for the file system is reported now,
/// naming the path, rather than after a simulation. A special file
/// (`/dev/null`) is not probed; a directory is an error.
pub fn probe(path: &Path) -> Result<(), OutputError> {
    match destination(path, false)? {
        Dest::Direct(_) => Ok(()),
        Dest::Replace { tmp, .. } => {
            std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(|e| {
                let e = if e.raw_os_error() == Some(36) {
                    io::Error::new(
                        e.kind(),
                        format!("{e}: the file name is longer than this file system allows (with the temporary suffix dedupsim writes through)"),
                    )
                } else {
                    e
                };
                OutputError::new(path, e)
            })?;
            let _ = std::fs::remove_file(&tmp);
            Ok(())
        }
    }
}

/// Writes `path` whole or not at all: `fill` is given the path to write
/// (a temporary file beside `path` with the same extension, or `path`
/// itself when it is a special file) and must create and complete it; the result is then synced and
/// renamed over `path`. For writers that open files themselves (e.g. an
/// image encoder); otherwise use [`write_file`].
///
/// Errors of `fill` are returned unchanged (after the temporary file is
/// removed); errors of the sync and rename are [`OutputError`]s naming
/// `path`.
pub fn replace_file<T, E: From<OutputError>>(path: &Path, fill: impl FnOnce(&Path) -> Result<T, E>) -> Result<T, E> {
    replace(path, true, |p, _direct| fill(p))
}

/// [`replace_file`], telling `fill` whether it writes the target itself
/// (a special file) rather than a new temporary file.
fn replace<T, E: From<OutputError>>(
    path: &Path,
    keep_ext: bool,
    fill: impl FnOnce(&Path, bool) -> Result<T, E>,
) -> Result<T, E> {
    match destination(path, keep_ext)? {
        Dest::Direct(p) => fill(&p, true),
        Dest::Replace { target, tmp } => {
            let result = fill(&tmp, false).and_then(|v| {
                commit(&tmp, &target).map_err(|e| E::from(OutputError::new(path, e)))?;
                Ok(v)
            });
            if result.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            result
        }
    }
}

/// Syncs `tmp`, gives it the permissions of an existing `target` and
/// renames it over `target`.
fn commit(tmp: &Path, target: &Path) -> io::Result<()> {
    let f = File::open(tmp)?;
    f.sync_all()?;
    if let Ok(m) = std::fs::metadata(target) {
        let _ = f.set_permissions(m.permissions());
    }
    drop(f);
    std::fs::rename(tmp, target)
}

/// Writes `path` whole or not at all (see the module doc) with a writer
/// error type of the caller's choice: `write` fills a buffered file; the
/// buffer is flushed and the file synced and renamed into place only if
/// `write` succeeded. I/O failures outside `write` are [`OutputError`]s
/// naming `path`; `write`'s own errors are returned unchanged, so a writer
/// that can fail for reasons of its own keeps its error type.
pub fn write_file_with<T, E: From<OutputError>>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> Result<T, E>,
) -> Result<T, E> {
    replace(path, false, |p, direct| {
        let file = if direct {
            OpenOptions::new().write(true).truncate(true).open(p)
        } else {
            OpenOptions::new().write(true).create_new(true).open(p)
        }
        .map_err(|e| OutputError::new(path, e))?;
        let mut w = BufWriter::new(file);
        let v = write(&mut w)?;
        w.flush().map_err(|e| OutputError::new(path, e))?;
        Ok(v)
    })
}

/// [`write_file_with`] for writers that only fail with I/O errors: every
/// error, the writer's included, is an [`OutputError`] naming `path`.
pub fn write_file<T>(path: &Path, write: impl FnOnce(&mut BufWriter<File>) -> io::Result<T>) -> Result<T, OutputError> {
    write_file_with(path, |w| write(w).map_err(|e| OutputError::new(path, e)))
}

/// Writes `bytes` to `path` whole or not at all.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    write_file(path, |w| w.write_all(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn writes_and_replaces_without_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        write_bytes(&p, b"one").unwrap();
        write_file(&p, |w| w.write_all(b"two")).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        assert_eq!(entries(dir.path()), ["a.json"]);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.csv");
        write_bytes(&p, b"good").unwrap();
        let e = write_file(&p, |w| {
            w.write_all(b"half")?;
            Err::<(), _>(io::Error::other("boom"))
        })
        .unwrap_err();
        assert!(e.to_string().contains("a.csv") && e.to_string().contains("boom"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"good");
        assert_eq!(entries(dir.path()), ["a.csv"]);
    }

    #[test]
    fn writer_errors_keep_their_type() {
        #[derive(Debug)]
        enum MyError {
            Mine,
            Out(OutputError),
        }
        impl From<OutputError> for MyError {
            fn from(e: OutputError) -> Self {
                MyError::Out(e)
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let r: Result<(), MyError> = write_file_with(&dir.path().join("x"), |_| Err(MyError::Mine));
        assert!(matches!(r, Err(MyError::Mine)));
        let r: Result<(), MyError> = write_file_with(&dir.path().join("no/x"), |_| Ok(()));
        assert!(matches!(r, Err(MyError::Out(e)) if e.path.ends_with("no/x")));
        assert!(entries(dir.path()).is_empty());
    }

    #[test]
    fn special_files_are_written_directly_and_errors_reported() {
        write_bytes(Path::new("/dev/null"), b"x").unwrap();
        if Path::new("/dev/full").exists() {
            let e = write_bytes(Path::new("/dev/full"), &[0u8; 100]).unwrap_err();
            assert!(e.to_string().starts_with("writing /dev/full: "), "{e}");
        }
    }

    #[test]
    fn temporary_names_are_hidden_and_keep_the_extension_only_when_asked() {
        let t = temp_beside(Path::new("out/cells/a.json"), false).unwrap();
        let n = t.file_name().unwrap().to_str().unwrap();
        assert!(t.starts_with("out/cells") && n.starts_with(".a.json.tmp.") && !n.ends_with(".json"), "{n}");
        let t = temp_beside(Path::new("fig.png"), true).unwrap();
        let n = t.file_name().unwrap().to_str().unwrap();
        assert!(n.starts_with(".fig.tmp.") && n.ends_with(".png"), "{n}");
        assert_ne!(temp_beside(Path::new("x"), false).unwrap(), temp_beside(Path::new("x"), false).unwrap());
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_bytes(dir.path(), b"x").unwrap_err();
        assert!(e.to_string().contains("directory"), "{e}");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_keeps_pointing_at_the_new_content() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        let link = dir.path().join("link.txt");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_bytes(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
    }
}
