//! What a page is made from: a manifest file, or a certify bundle (a folder
//! or a `.tar` archive) whose evidence holds each run cell's execution
//! records; and, for `--against`, the manifests `diff` compares.

use crate::bundle::{read_regular, EvidenceLine, EVIDENCE_FILE, MANIFEST_FILE};
use crate::compare::diff::{diff, Diff};
use crate::compare::read::{read_manifest, ReadError};
use crate::page::records::{of_records, TurnSummary};
use sharedos_grading::output::manifest::Manifest;
use sharedos_grading::vocab::CellKey;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A page's input, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The manifest.
    pub manifest: Manifest,
    /// Each run cell's turns in short, when the input is a bundle.
    pub records: Option<BTreeMap<CellKey, Vec<TurnSummary>>>,
}

/// An input that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("read {}: {detail}", path.display())]
pub struct PageError {
    /// The file, as the user named it (inside an archive: the archive and
    /// the file's name in it).
    pub path: PathBuf,
    /// What was wrong.
    pub detail: String,
}

/// Reads a manifest file, or a bundle's manifest and evidence.
///
/// # Errors
/// When the file or a bundle's manifest or evidence cannot be read or
/// parsed.
pub fn load(path: &Path) -> Result<Loaded, PageError> {
    if crate::archive::is_archive(path) && path.is_file() {
        let unpacked = crate::archive::unpack(path)
            .map_err(|e| PageError { path: path.to_path_buf(), detail: format!("a bundle archive ({})", e.detail) })?;
        return load_bundle(unpacked.path(), path);
    }
    if path.is_dir() {
        return load_bundle(path, path);
    }
    Ok(Loaded { manifest: manifest_at(path, path)?, records: None })
}

/// Reads and parses the manifest at `file`; errors name `shown`.
fn manifest_at(file: &Path, shown: &Path) -> Result<Manifest, PageError> {
    let error = |detail: String| PageError { path: shown.to_path_buf(), detail };
    let bytes = read_regular(file).map_err(|e| error(format!("expected a manifest, a regular file ({e})")))?;
    let mut deserializer = serde_json::Deserializer::from_slice(&bytes);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let at = e.path().to_string();
        error(format!("expected a conformance manifest of this harness (at {at}: {})", e.inner()))
    })
}

/// A bundle folder's manifest and evidence; errors name files below `shown`.
fn load_bundle(folder: &Path, shown: &Path) -> Result<Loaded, PageError> {
    let manifest = manifest_at(&folder.join(MANIFEST_FILE), &shown.join(MANIFEST_FILE))?;
    let error = |detail: String| PageError { path: shown.join(EVIDENCE_FILE), detail };
    let bytes = read_regular(&folder.join(EVIDENCE_FILE)).map_err(|e| error(e.to_string()))?;
    let text = String::from_utf8(bytes).map_err(|e| error(format!("expected UTF-8 JSON Lines ({e})")))?;
    let mut records = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let parsed: EvidenceLine = serde_json::from_str(line)
            .map_err(|e| error(format!("line {}: expected one cell's evidence ({e})", index + 1)))?;
        records.insert(parsed.key(), of_records(&parsed.grading.records));
    }
    Ok(Loaded { manifest, records: Some(records) })
}

/// What moved from `other` (before) to `input` (after), as `diff OTHER
/// INPUT` reports it.
///
/// # Errors
/// When either cannot be read as a manifest `diff` compares.
pub fn against(input: &Path, other: &Path) -> Result<Diff, ReadError> {
    let before = read_manifest(other)?;
    let after = read_manifest(input)?;
    Ok(diff(&before, &after))
}
