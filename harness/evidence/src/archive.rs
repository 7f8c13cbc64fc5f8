//! The archive form of a bundle: the same files in one tar file, in name
//! order, with fixed headers (mode 0644, no owner, time 0), so one bundle
//! is always the same bytes. Reading one back unpacks it into a temporary
//! folder, refusing anything but regular files and folders, paths that
//! leave the archive, and archives larger than [`MAX_UNPACKED_BYTES`],
//! deeper than [`MAX_DEPTH`] or with more than [`MAX_ENTRIES`] entries.
//!
//! Unpacking writes each entry itself rather than through the tar
//! library's own unpacking, which checks every parent folder of every
//! entry again and so takes time that grows faster than the archive:
//! here a name is checked once, component by component, and since only
//! folders and regular files are ever made, no link can lead a later
//! entry out of the temporary folder.

use crate::bundle::{parent_of, staging_prefix, BundleFile, WriteError};
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

/// The extension that makes `--out` an archive.
pub const EXTENSION: &str = "tar";
/// The most an archive may unpack to.
pub const MAX_UNPACKED_BYTES: u64 = 1 << 30;
/// The most folders deep an entry may be: a bundle is four deep at most
/// (`suite/harness/seats/seat.json`), so this leaves room for any suite
/// while bounding the work one name can ask for.
pub const MAX_DEPTH: usize = 64;
/// The most entries an archive may hold: a bundle holds a few hundred.
pub const MAX_ENTRIES: usize = 100_000;
/// The most bytes a GNU long-name or pax entry (the name of the entry
/// after it) may hold: a name [`MAX_DEPTH`] folders of 255 bytes deep is
/// under 17 KiB. The tar library would read one whole, however large.
pub const MAX_EXTENSION_BYTES: u64 = 64 * 1024;

/// Whether `path` names an archive rather than a folder.
#[must_use]
pub fn is_archive(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == EXTENSION)
}

/// Why an archive could not be read as a bundle.
#[derive(Debug, thiserror::Error)]
#[error("unpack {}: {detail}", path.display())]
pub struct UnpackError {
    /// The archive, as the user named it (never the temporary folder).
    pub path: PathBuf,
    /// What was wrong.
    pub detail: String,
}

/// Writes `files` as the bundle `out`: one archive when its name ends in
/// `.tar`, else a folder (see [`crate::bundle::write_bundle`]); all or
/// nothing either way.
///
/// # Errors
/// When `out` exists or cannot be written; nothing is left at `out`.
pub fn write_to(out: &Path, files: &[BundleFile]) -> Result<(), WriteError> {
    if is_archive(out) {
        write_archive(out, files)
    } else {
        crate::bundle::write_bundle(out, files)
    }
}

/// Writes `files` as the archive `out`, all or nothing, never replacing
/// anything at `out` (even something that appears while it is written).
///
/// # Errors
/// When `out` exists or cannot be written; nothing is left at `out`.
pub fn write_archive(out: &Path, files: &[BundleFile]) -> Result<(), WriteError> {
    if out.symlink_metadata().is_ok() {
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
    // A staging file of this process's own, removed when dropped unless
    // it became `out`; made as `std::fs::write` makes a file (the umask
    // decides), not private as a temporary file is.
    let mut staging = tempfile::Builder::new()
        .prefix(&staging_prefix(out))
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(parent_of(out))
        .map_err(io)?;
    staging.write_all(&bytes).and_then(|()| staging.as_file().sync_all()).map_err(io)?;
    // The final step links the file at `out` only if nothing is there,
    // atomically: of two writers racing to one path, one wins and the
    // other is told it exists.
    match staging.persist_noclobber(out) {
        Ok(_) => Ok(()),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Err(WriteError::Exists(out.to_path_buf())),
        Err(e) => Err(io(e.error)),
    }
}

/// Unpacks the archive at `path` into a fresh temporary folder.
///
/// # Errors
/// When it cannot be read, or holds an entry a bundle never has; the
/// error names `path`, never the temporary folder.
pub fn unpack(path: &Path) -> Result<tempfile::TempDir, UnpackError> {
    let error = |detail: String| UnpackError { path: path.to_path_buf(), detail };
    // Checked before opening: a FIFO would block the open.
    let metadata = std::fs::metadata(path).map_err(|e| error(e.to_string()))?;
    if !metadata.is_file() {
        return Err(error("not a regular file".to_string()));
    }
    let file = std::fs::File::open(path).map_err(|e| error(e.to_string()))?;
    let folder = tempfile::tempdir().map_err(|e| error(format!("no temporary folder ({e})")))?;
    let mut archive = tar::Archive::new(file.take(MAX_UNPACKED_BYTES * 2));
    let mut total = 0u64;
    // Raw entries: long names and pax headers are read here, bounded,
    // rather than whole by the tar library.
    let entries = archive.entries().map_err(|e| error(format!("not a tar archive ({e})")))?.raw(true);
    let mut extension: Option<Option<PathBuf>> = None;
    for (index, entry) in entries.enumerate() {
        if index >= MAX_ENTRIES {
            return Err(error(format!("it has more than {MAX_ENTRIES} entries; a bundle has a few hundred")));
        }
        let mut entry = entry.map_err(|e| error(format!("a truncated or damaged tar archive ({e})")))?;
        let kind = entry.header().entry_type();
        if kind.is_gnu_longname() || kind.is_pax_local_extensions() {
            if extension.is_some() {
                return Err(error("two long-name or pax entries describe one entry".to_string()));
            }
            extension = Some(read_extension(&mut entry).map_err(error)?);
            continue;
        }
        total = total.saturating_add(entry.size());
        if total > MAX_UNPACKED_BYTES {
            return Err(error(format!("it unpacks to more than {MAX_UNPACKED_BYTES} bytes")));
        }
        let name = match extension.take().flatten() {
            Some(name) => name,
            None => entry.path().map_err(|e| error(format!("an entry with an unreadable name ({e})")))?.into_owned(),
        };
        unpack_entry(&mut entry, &name, folder.path()).map_err(error)?;
    }
    if extension.is_some() {
        return Err(error("a truncated tar archive (it ends with a long-name or pax entry)".to_string()));
    }
    Ok(folder)
}

/// Writes one entry under `folder`: a folder, or a regular file of exactly
/// its stated size. The error says why, naming the entry as the archive
/// does.
fn unpack_entry<R: Read>(entry: &mut tar::Entry<'_, R>, name: &Path, folder: &Path) -> Result<(), String> {
    let shown = shown_name(name);
    let relative = relative_name(name).map_err(|why| format!("entry `{shown}` {why}"))?;
    let target = folder.join(&relative);
    let fails = |e: std::io::Error| format!("entry `{shown}` does not unpack ({e})");
    match entry.header().entry_type() {
        tar::EntryType::Directory => std::fs::create_dir_all(&target).map_err(fails),
        tar::EntryType::Regular if relative.as_os_str().is_empty() => Err(format!("entry `{shown}` has no file name")),
        tar::EntryType::Regular => {
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent).map_err(fails)?;
            }
            // `create_new`: a name the archive holds twice is refused,
            // not silently overwritten.
            let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&target).map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    format!("entry `{shown}` is in the archive twice")
                } else {
                    fails(e)
                }
            })?;
            let size = entry.size();
            let written = std::io::copy(entry, &mut file).map_err(fails)?;
            if written == size {
                Ok(())
            } else {
                Err(format!(
                    "a truncated or damaged tar archive (entry `{shown}` ends after {written} of its {size} bytes)"
                ))
            }
        }
        // Metadata for the whole archive (`git archive` writes one), not a
        // file: nothing to unpack.
        tar::EntryType::XGlobalHeader => Ok(()),
        other => Err(format!("entry `{shown}` is a {other:?}, not a file or folder")),
    }
}

/// The name a GNU long-name or pax entry gives the entry after it, if it
/// gives one, read to at most [`MAX_EXTENSION_BYTES`]. A pax `size` is
/// refused: the entry's size must be the one its own header states, so
/// this reader and any other see the same bytes.
fn read_extension<R: Read>(entry: &mut tar::Entry<'_, R>) -> Result<Option<PathBuf>, String> {
    use std::os::unix::ffi::OsStrExt;
    if entry.size() > MAX_EXTENSION_BYTES {
        return Err(format!("a long-name or pax entry of {} bytes (at most {MAX_EXTENSION_BYTES})", entry.size()));
    }
    let mut bytes = Vec::new();
    entry
        .take(MAX_EXTENSION_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("a truncated or damaged tar archive ({e})"))?;
    let name = if entry.header().entry_type().is_gnu_longname() {
        Some(bytes.strip_suffix(&[0]).unwrap_or(&bytes).to_vec())
    } else {
        let mut path = None;
        for field in tar::PaxExtensions::new(&bytes) {
            let field = field.map_err(|e| format!("a damaged pax entry ({e})"))?;
            match field.key_bytes() {
                b"path" => path = Some(field.value_bytes().to_vec()),
                b"size" => {
                    return Err("a pax entry that restates a size; a bundle's entries state their own".to_string())
                }
                _ => {}
            }
        }
        path
    };
    Ok(name.map(|bytes| PathBuf::from(std::ffi::OsStr::from_bytes(&bytes))))
}

/// The entry's path relative to the archive's root: `.` components (as in
/// `./manifest.json`, which `tar -C bundle -cf x.tar .` writes) dropped,
/// anything that could leave the root refused, and at most [`MAX_DEPTH`]
/// components deep.
fn relative_name(name: &Path) -> Result<PathBuf, String> {
    let mut relative = PathBuf::new();
    let mut depth = 0usize;
    for component in name.components() {
        match component {
            Component::CurDir => {}
            Component::Normal(part) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(format!("is more than {MAX_DEPTH} folders deep; a bundle is a few deep"));
                }
                relative.push(part);
            }
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err("leaves the archive".to_string());
            }
        }
    }
    Ok(relative)
}

/// The most characters of an entry's name an error quotes.
const SHOWN_NAME_CHARS: usize = 120;

/// An entry's name as an error quotes it: a hostile one can be thousands
/// of characters long, so only its start is shown.
fn shown_name(name: &Path) -> String {
    let full = name.display().to_string();
    match full.char_indices().nth(SHOWN_NAME_CHARS) {
        Some((cut, _)) => format!("{}…", &full[..cut]),
        None => full,
    }
}
