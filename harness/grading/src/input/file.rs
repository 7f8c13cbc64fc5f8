//! The one way the harness opens a file it reads: only a regular file of a
//! bounded size. A FIFO, a device or a folder where a case, a golden file,
//! a bundle file or a key is expected would hang the read or never end; it
//! is refused with a clear error instead.

use std::io::{Error, ErrorKind, Read};
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

/// Reads the regular file at `path`, of at most [`MAX_FILE_BYTES`].
///
/// # Errors
/// As [`read_regular_capped`].
pub fn read_regular(path: &Path, links: Links) -> std::io::Result<Vec<u8>> {
    read_regular_capped(path, links, MAX_FILE_BYTES)
}

/// Reads the regular file at `path`, of at most `cap` bytes.
///
/// The type is checked before the file is opened: opening a FIFO for
/// reading blocks until a writer comes, so it must never be opened. The
/// read is bounded too, so a file that grows after the check (or was
/// swapped for another) still yields at most `cap` bytes before it is
/// refused.
///
/// # Errors
/// `NotFound` when absent, `InvalidInput` when it is not a regular file
/// (or is a link `links` refuses) or holds more than `cap` bytes, and any
/// read error.
pub fn read_regular_capped(path: &Path, links: Links, cap: u64) -> std::io::Result<Vec<u8>> {
    let metadata = match links {
        Links::Follow => std::fs::metadata(path)?,
        Links::Refuse => std::fs::symlink_metadata(path)?,
    };
    refuse_irregular(&metadata)?;
    let too_large = || Error::new(ErrorKind::InvalidInput, format!("larger than {}", shown_size(cap)));
    if metadata.len() > cap {
        return Err(too_large());
    }
    let file = std::fs::File::open(path)?;
    // What was opened may not be what was checked, if the path changed in
    // between: check the open file's own type as well.
    refuse_irregular(&file.metadata()?)?;
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large());
    }
    Ok(bytes)
}

fn refuse_irregular(metadata: &std::fs::Metadata) -> std::io::Result<()> {
    if metadata.is_file() {
        return Ok(());
    }
    let what = if metadata.file_type().is_symlink() { "a symbolic link" } else { "not a regular file" };
    Err(Error::new(ErrorKind::InvalidInput, what))
}

/// `cap` in the largest binary unit that divides it (`1 GiB`, `64 KiB`).
fn shown_size(cap: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if cap >= 1 << shift && cap.is_multiple_of(1 << shift) {
            return format!("{} {unit}", cap >> shift);
        }
    }
    format!("{cap} bytes")
}
