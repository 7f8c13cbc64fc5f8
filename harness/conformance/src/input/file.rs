//! The one way the harness opens a file it reads: only a regular file of a
//! bounded size. A FIFO, a device or a folder where a case, a golden file
//! or a bundle file is expected would hang the read or never end; it is
//! refused with a clear error instead.

use std::io::{Error, ErrorKind};
use std::path::Path;

/// The most a file the harness reads may hold.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// Whether a symbolic link is followed to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Follow it: a suite may link its files; the target must be regular.
    Follow,
    /// Refuse it: an untrusted bundle's link could point anywhere.
    Refuse,
}

/// Reads the regular file at `path`.
///
/// # Errors
/// `NotFound` when absent, `InvalidInput` when it is not a regular file
/// (or is a link `links` refuses) or exceeds [`MAX_FILE_BYTES`], and any
/// read error.
pub fn read_regular(path: &Path, links: Links) -> std::io::Result<Vec<u8>> {
    let metadata = match links {
        Links::Follow => std::fs::metadata(path)?,
        Links::Refuse => std::fs::symlink_metadata(path)?,
    };
    if !metadata.is_file() {
        let what = if metadata.file_type().is_symlink() { "a symbolic link" } else { "not a regular file" };
        return Err(Error::new(ErrorKind::InvalidInput, what));
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(Error::new(ErrorKind::InvalidInput, "larger than 1 GiB"));
    }
    std::fs::read(path)
}
