//! Writing report and golden files so that an interrupted run never leaves a
//! half-written file behind: write a sibling temporary file, then rename.

use crate::input::file::{read_regular, Links};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A file that could not be written.
#[derive(Debug, thiserror::Error)]
#[error("write {path}: {source}")]
pub struct WriteError {
    /// The file.
    pub path: PathBuf,
    /// The I/O failure.
    #[source]
    pub source: std::io::Error,
}

/// Writes `bytes` to `path` atomically, creating parent directories.
///
/// # Errors
/// When a directory or the file cannot be written, or the rename fails.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let fail = |source| WriteError { path: path.to_path_buf(), source };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(fail)?;
    }
    let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temporary = path.with_file_name(format!(".{file_name}.tmp-{}", std::process::id()));
    let written = fs::File::create(&temporary).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()
    });
    if let Err(source) = written {
        let _ = fs::remove_file(&temporary);
        return Err(fail(source));
    }
    fs::rename(&temporary, path).map_err(|source| {
        let _ = fs::remove_file(&temporary);
        fail(source)
    })
}

/// Writes `bytes` only when the file does not already hold exactly them, so
/// regenerating an unchanged tree touches nothing. Returns whether it wrote.
///
/// # Errors
/// As [`write_atomically`].
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<bool, WriteError> {
    // Only a regular file is read back: a FIFO in its place would never
    // answer, and the rename replaces whatever is there.
    if read_regular(path, Links::Follow).is_ok_and(|existing| existing == bytes) {
        return Ok(false);
    }
    write_atomically(path, bytes)?;
    Ok(true)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn writes_then_leaves_identical_content_alone() {
        let dir = std::env::temp_dir().join(format!("sharedos-output-{}", std::process::id()));
        let path = dir.join("nested").join("file.json");
        assert!(write_if_changed(&path, b"{}\n").unwrap());
        assert!(!write_if_changed(&path, b"{}\n").unwrap());
        assert_eq!(fs::read(&path).unwrap(), b"{}\n");
        let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
        fs::remove_dir_all(dir).unwrap();
    }
}
