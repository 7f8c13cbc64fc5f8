//! The archive form of a bundle: the same files in one tar file, in name
//! order, with fixed headers (mode 0644, no owner, time 0), so one bundle
//! is always the same bytes. Reading one back unpacks it into a temporary
//! folder, refusing anything but regular files and folders, paths that
//! leave the archive, and archives larger than [`MAX_UNPACKED_BYTES`].

use crate::bundle::{BundleFile, WriteError};
use std::io::Read;
use std::path::{Component, Path};

/// The extension that makes `--out` an archive.
pub const EXTENSION: &str = "tar";
/// The most an archive may unpack to.
pub const MAX_UNPACKED_BYTES: u64 = 1 << 30;

/// Whether `path` names an archive rather than a folder.
#[must_use]
pub fn is_archive(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == EXTENSION)
}

/// Why an archive could not be read as a bundle.
#[derive(Debug, thiserror::Error)]
#[error("unpack {}: {detail}", path.display())]
pub struct UnpackError {
    /// The archive.
    pub path: std::path::PathBuf,
    /// What was wrong.
    pub detail: String,
}

/// Writes `files` as the archive `out`, all or nothing.
///
/// # Errors
/// When `out` exists or cannot be written; nothing is left at `out`.
pub fn write_archive(out: &Path, files: &[BundleFile]) -> Result<(), WriteError> {
    if out.exists() {
        return Err(WriteError::Exists(out.to_path_buf()));
    }
    let io = |source| WriteError::Io { path: out.to_path_buf(), source };
    let mut sorted: Vec<&BundleFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut builder = tar::Builder::new(Vec::new());
    for file in sorted {
        let mut header = tar::Header::new_ustar();
        header.set_size(file.bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        builder.append_data(&mut header, &file.name, file.bytes.as_slice()).map_err(io)?;
    }
    let bytes = builder.into_inner().map_err(io)?;
    let name = out.file_name().map_or_else(|| "bundle.tar".into(), |n| n.to_string_lossy().into_owned());
    let staging = out.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    let written = std::fs::write(&staging, bytes).and_then(|()| std::fs::rename(&staging, out));
    if written.is_err() {
        let _ = std::fs::remove_file(&staging);
    }
    written.map_err(io)
}

/// Unpacks the archive at `path` into a fresh temporary folder.
///
/// # Errors
/// When it cannot be read, or holds an entry a bundle never has.
pub fn unpack(path: &Path) -> Result<tempfile::TempDir, UnpackError> {
    let error = |detail: String| UnpackError { path: path.to_path_buf(), detail };
    let file = std::fs::File::open(path).map_err(|e| error(e.to_string()))?;
    let folder = tempfile::tempdir().map_err(|e| error(format!("no temporary folder ({e})")))?;
    let mut archive = tar::Archive::new(file.take(MAX_UNPACKED_BYTES * 2));
    let mut total = 0u64;
    for entry in archive.entries().map_err(|e| error(format!("not a tar archive ({e})")))? {
        let mut entry = entry.map_err(|e| error(format!("a truncated or damaged tar archive ({e})")))?;
        let name = entry.path().map_err(|e| error(format!("an entry with an unreadable name ({e})")))?.into_owned();
        let shown = name.display().to_string();
        if !name.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(error(format!("entry `{shown}` leaves the archive")));
        }
        match entry.header().entry_type() {
            tar::EntryType::Regular | tar::EntryType::Directory => {}
            other => return Err(error(format!("entry `{shown}` is a {other:?}, not a file or folder"))),
        }
        total += entry.size();
        if total > MAX_UNPACKED_BYTES {
            return Err(error(format!("it unpacks to more than {MAX_UNPACKED_BYTES} bytes")));
        }
        entry.unpack_in(folder.path()).map_err(|e| error(format!("entry `{shown}` does not unpack ({e})")))?;
    }
    Ok(folder)
}
