//! A bundle's layout, its evidence lines, and how it is written: into a
//! hidden sibling folder first, renamed into place once every file is
//! written, so an interrupted `certify` leaves nothing that looks like a
//! bundle, and never onto something already there.
//!
//! ```text
//! BUNDLE/
//!   manifest.json          the run's manifest: Adversary beside the certified column
//!   evidence.jsonl         one canonical JSON line per run cell, in manifest order
//!   suite/adversaries/...  the suite as run
//!   suite/cases/...
//!   suite/harness/seats/…  the certified seat's file, for a process column
//!   statement.json         in-toto Statement v1 over every file above
//!   statement.dsse.json    the statement signed (with --sign-key)
//! ```

use sharedos_grading::grade::evidence::GradingEvidence;
use sharedos_grading::input::file::{self, Links};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The statement.
pub const STATEMENT_FILE: &str = "statement.json";
/// The signed statement.
pub const ENVELOPE_FILE: &str = "statement.dsse.json";
/// The manifest.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The evidence.
pub const EVIDENCE_FILE: &str = "evidence.jsonl";
/// The suite as run.
pub const SUITE_DIR: &str = "suite";

/// One run cell's evidence line, with the grading evidence this harness
/// grades it again from (the line's type is in
/// `sharedos-conformance-metadata`).
pub type EvidenceLine = sharedos_conformance_metadata::evidence_line::EvidenceLine<GradingEvidence>;

/// A file of a bundle: its `/`-separated path inside it, and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BundleFile {
    /// Path inside the bundle.
    pub name: String,
    /// Content.
    pub bytes: Vec<u8>,
}

/// Why a bundle could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Something is already at the bundle's path.
    #[error("write the bundle {}: it already exists (remove it, or choose another --out)", .0.display())]
    Exists(PathBuf),
    /// A file or folder could not be written.
    #[error("write {}: {source}", path.display())]
    Io {
        /// Where.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Writes `files` as the bundle `out`, all or nothing, never replacing
/// anything at `out` (even something that appears while it is written).
///
/// # Errors
/// When `out` exists or a file cannot be written; nothing is left at `out`.
pub fn write_bundle(out: &Path, files: &[BundleFile]) -> Result<(), WriteError> {
    if out.symlink_metadata().is_ok() {
        return Err(WriteError::Exists(out.to_path_buf()));
    }
    let io = |source| WriteError::Io { path: out.to_path_buf(), source };
    // A staging folder of this process's own, removed when dropped unless
    // it became `out`; made as `create_dir` makes one (the umask decides),
    // not private as a temporary folder is.
    let staging = tempfile::Builder::new()
        .prefix(&staging_prefix(out))
        .permissions(std::fs::Permissions::from_mode(0o777))
        .tempdir_in(parent_of(out))
        .map_err(io)?;
    write_all(staging.path(), out, files)?;
    put_in_place(staging, out)
}

/// The final step, atomic and never replacing. A rename replaces an empty
/// folder at its target, so `out` is first claimed by making it an empty
/// folder, which fails when anything is there: of two writers racing to
/// one path, one wins and the other is told it exists. The rename then
/// replaces only the folder this call made.
fn put_in_place(staging: tempfile::TempDir, out: &Path) -> Result<(), WriteError> {
    match std::fs::create_dir(out) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(WriteError::Exists(out.to_path_buf())),
        Err(source) => return Err(WriteError::Io { path: out.to_path_buf(), source }),
    }
    match std::fs::rename(staging.path(), out) {
        Ok(()) => {
            // Renamed away: nothing is left at the staging path to remove.
            let _ = staging.keep();
            Ok(())
        }
        Err(source) => {
            // Only the empty claim is removed; `staging` removes itself.
            let _ = std::fs::remove_dir(out);
            Err(WriteError::Io { path: out.to_path_buf(), source })
        }
    }
}

/// Writes every file under `staging`; an error names the file as it
/// would be at `out`, not in the staging folder, which is gone by then.
fn write_all(staging: &Path, out: &Path, files: &[BundleFile]) -> Result<(), WriteError> {
    for file in files {
        let io = |source| WriteError::Io { path: out.join(&file.name), source };
        let path = staging.join(&file.name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(&path, &file.bytes).map_err(io)?;
    }
    Ok(())
}

/// Reads a file of an untrusted bundle: a regular file, never a link
/// (see [`sharedos_grading::input::file::read_regular`]).
///
/// # Errors
/// As that function.
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    file::read_regular(path, Links::Refuse)
}

/// Every file under `dir`, as bundle paths, sorted.
///
/// # Errors
/// When a folder cannot be listed.
pub fn list_files(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    let mut pending = vec![PathBuf::new()];
    while let Some(relative) = pending.pop() {
        for entry in std::fs::read_dir(dir.join(&relative))? {
            let entry = entry?;
            let path = relative.join(entry.file_name());
            if entry.file_type()?.is_dir() {
                pending.push(path);
            } else {
                let parts: Vec<String> = path.iter().map(|p| p.to_string_lossy().into_owned()).collect();
                names.push(parts.join("/"));
            }
        }
    }
    names.sort();
    Ok(names)
}

/// The start of a staging name beside `out`: hidden, and carrying this
/// process's id, so a left-over one says whose it was.
pub(crate) fn staging_prefix(out: &Path) -> String {
    let name = out.file_name().map_or_else(|| "bundle".into(), |n| n.to_string_lossy().into_owned());
    format!(".{name}.partial-{}-", std::process::id())
}

/// The folder `out` is in (`.` for a bare name).
pub(crate) fn parent_of(out: &Path) -> &Path {
    out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))
}
