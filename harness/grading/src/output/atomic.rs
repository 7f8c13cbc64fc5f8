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

/// What a temporary file's name holds before its writer's process id.
const TEMPORARY_MARK: &str = ".tmp-";

/// A temporary file [`write_atomically`] made, by whether its writer runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Temporary {
    /// Its writer runs (another `run` or `bless` at the same moment): the
    /// file is that process's to rename or remove, never another's.
    Writing,
    /// Its writer has ended: an interrupted write left it, safe to remove.
    LeftOver,
}

/// Whether `name` is a temporary file of [`write_atomically`]'s, and whose.
#[must_use]
pub fn temporary(name: &str) -> Option<Temporary> {
    let (_, writer) = name.strip_prefix('.')?.rsplit_once(TEMPORARY_MARK)?;
    // A process id that never was is nobody's write under way.
    let running = writer.parse::<u32>().is_ok_and(|pid| Path::new("/proc").join(pid.to_string()).exists());
    Some(if running { Temporary::Writing } else { Temporary::LeftOver })
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
    let temporary = path.with_file_name(format!(".{file_name}{TEMPORARY_MARK}{}", std::process::id()));
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

    #[test]
    fn a_temporary_file_is_left_over_only_once_its_writer_has_ended() {
        let mut ended = std::process::Command::new("true").spawn().unwrap();
        let ended_pid = ended.id();
        ended.wait().unwrap();
        let cases = [
            (format!(".a.json.tmp-{}", std::process::id()), Some(Temporary::Writing)),
            (format!(".a.json.tmp-{ended_pid}"), Some(Temporary::LeftOver)),
            (".a.json.tmp-notapid".to_string(), Some(Temporary::LeftOver)),
            ("a.json".to_string(), None),
            (".a.json".to_string(), None),
        ];
        for (name, expected) in &cases {
            assert_eq!(temporary(name), *expected, "{name}");
        }
        assert_eq!(cases.len(), 5);
    }
}
