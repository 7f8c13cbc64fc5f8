//! Reading the manifests `diff` compares: this harness's, from a file or a
//! bundle, and SharedOS's own in every shape its judge versions 1 to 6
//! wrote (with or without world-set and prompt-set hashes, `causes`,
//! `driverIssued`, `turns`). What is read is checked, not trusted: keys
//! outside both shapes, a status outside the vocabulary, a hash that is not
//! 64 lowercase hex, a judge version outside 1–6, a row or cell twice, a
//! cell of an undeclared column — each refused with the file and pointer.

use crate::bundle::{read_regular, MANIFEST_FILE, STATEMENT_FILE};
use crate::statement::Statement;
use serde::Deserialize;
use sharedos_conformance::grade::judge::CellStatus;
use sharedos_conformance::input::case::Family;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Whose manifest it is, as its shape tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// This harness's: it states `rulesVersion` and `hashScheme`.
    Harness,
    /// SharedOS's: judge version only, hashes over `localeCompare`-sorted JSON.
    SharedOs,
}

/// A manifest as `diff` compares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadManifest {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its shape.
    pub shape: Shape,
    /// The judge version it states.
    pub judge_version: String,
    /// The harness's rules version (this harness's shape only).
    pub rules_version: Option<String>,
    /// How its hashes were computed; SharedOS's are named for what they are.
    pub hash_scheme: String,
    /// The harness version, when a bundle's statement says it.
    pub harness_version: Option<String>,
    /// Case-set hash.
    pub case_set_hash: String,
    /// World-set hash (judge versions before 3 had none).
    pub world_set_hash: Option<String>,
    /// Columns in order: id, label, prompt-set hash.
    pub columns: Vec<(String, String, Option<String>)>,
    /// Every cell by (case, condition, column).
    pub cells: BTreeMap<(String, String, String), ReadCell>,
    /// The family of each (case, condition), when the manifest groups them.
    pub families: BTreeMap<(String, String), Family>,
}

/// The parts of a cell `diff` compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadCell {
    /// The verdict.
    pub status: CellStatus,
    /// Boundaries that refused.
    pub refused_by: Vec<String>,
    /// Reason codes.
    pub reason_codes: Vec<String>,
    /// Causes (`None` in manifests from before they existed).
    pub causes: Option<Vec<String>>,
}

/// The hash scheme SharedOS's manifests use.
pub const SHAREDOS_HASH_SCHEME: &str = "sharedos-sha256-localecompare-json";

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawManifest {
    version: String,
    judge_version: String,
    rules_version: Option<String>,
    hash_scheme: Option<String>,
    case_set_hash: String,
    world_set_hash: Option<String>,
    evidence_root: Option<String>,
    columns: Vec<RawColumn>,
    #[serde(default)]
    families: Vec<RawFamily>,
    // Derived from the cells, which are compared instead.
    #[serde(default)]
    #[allow(dead_code)]
    reason_codes: Vec<serde_json::Value>,
    rows: Vec<RawRow>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawColumn {
    id: String,
    label: String,
    prompt_set_hash: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawFamily {
    family: Family,
    rows: Vec<RawRowRef>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawRowRef {
    case_id: String,
    condition_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct RawRow {
    case_id: String,
    condition_id: String,
    kind: String,
    invariant: String,
    expected_outcome: String,
    condition: String,
    turn_expectation: Option<serde_json::Value>,
    cells: Vec<RawCell>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct RawCell {
    column_id: String,
    status: CellStatus,
    refused_by: Vec<String>,
    reason_codes: Vec<String>,
    causes: Option<Vec<String>>,
    declared: u32,
    attempted: u32,
    driver_issued: Option<Vec<String>>,
    not_applicable: u32,
    record_usable: bool,
    record_gaps: Vec<String>,
    turns: Option<u32>,
    detail: Option<String>,
}

/// Why a manifest cannot be compared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: at {}: expected {expected}", file.display(), if pointer.is_empty() { "the document root" } else { pointer })]
pub struct ReadError {
    /// The file.
    pub file: PathBuf,
    /// The JSON pointer.
    pub pointer: String,
    /// What was expected there.
    pub expected: String,
}

/// Reads a manifest file, or the manifest of a bundle (folder or archive).
///
/// # Errors
/// When it cannot be read or is not a manifest of a known shape.
pub fn read_manifest(path: &Path) -> Result<ReadManifest, ReadError> {
    if crate::archive::is_archive(path) && path.is_file() {
        let unpacked = crate::archive::unpack(path).map_err(|e| ReadError {
            file: path.to_path_buf(),
            pointer: String::new(),
            expected: format!("a bundle archive ({})", e.detail),
        })?;
        let mut read = read_manifest(unpacked.path()).map_err(|e| ReadError { file: path.join(MANIFEST_FILE), ..e })?;
        read.path = path.to_path_buf();
        return Ok(read);
    }
    let (file, harness_version) = if path.is_dir() {
        (path.join(MANIFEST_FILE), bundle_harness_version(path))
    } else {
        (path.to_path_buf(), None)
    };
    let bytes = read_regular(&file).map_err(|e| ReadError {
        file: file.clone(),
        pointer: String::new(),
        expected: format!("a readable manifest, a regular file ({e})"),
    })?;
    let mut read = parse_manifest(&file, &bytes)?;
    read.path = path.to_path_buf();
    read.harness_version = harness_version;
    Ok(read)
}

/// Reads a manifest's bytes (from `file`).
///
/// # Errors
/// When they are not a manifest of a known shape.
pub fn parse_manifest(file: &Path, bytes: &[u8]) -> Result<ReadManifest, ReadError> {
    let error = |pointer: String, expected: String| ReadError { file: file.to_path_buf(), pointer, expected };
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let raw: RawManifest = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let pointer = pointer_of(e.path());
        error(pointer, format!("a conformance manifest of this harness or of SharedOS ({})", e.inner()))
    })?;
    let mut read = check(raw).map_err(|(pointer, expected)| error(pointer, expected))?;
    read.path = file.to_path_buf();
    Ok(read)
}

/// The harness version a bundle's statement names.
fn bundle_harness_version(bundle: &Path) -> Option<String> {
    let bytes = read_regular(&bundle.join(STATEMENT_FILE)).ok()?;
    let statement: Statement = serde_json::from_slice(&bytes).ok()?;
    Some(statement.predicate.harness.version)
}

fn pointer_of(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut pointer = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
            Segment::Map { key } => pointer.push_str(&format!("/{}", key.replace('~', "~0").replace('/', "~1"))),
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    pointer
}

type Refusal = (String, String);

fn is_hash(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn hash_at(pointer: &str, value: &str) -> Result<(), Refusal> {
    if is_hash(value) {
        Ok(())
    } else {
        Err((pointer.to_string(), "64 lowercase hex characters".to_string()))
    }
}

/// Checks what serde cannot, and keeps what `diff` compares.
fn check(raw: RawManifest) -> Result<ReadManifest, Refusal> {
    if raw.version != "1" {
        return Err(("/version".into(), "manifest version \"1\"".into()));
    }
    let shape = if raw.rules_version.is_some() || raw.hash_scheme.is_some() { Shape::Harness } else { Shape::SharedOs };
    let judge: Option<u32> = raw.judge_version.parse().ok().filter(|v| (1..=6).contains(v));
    if judge.is_none() {
        return Err(("/judgeVersion".into(), "a SharedOS judge version from \"1\" to \"6\"".into()));
    }
    hash_at("/caseSetHash", &raw.case_set_hash)?;
    if let Some(world) = &raw.world_set_hash {
        hash_at("/worldSetHash", world)?;
    }
    if let Some(root) = &raw.evidence_root {
        hash_at("/evidenceRoot", root)?;
    }
    let mut columns = Vec::new();
    for (index, column) in raw.columns.into_iter().enumerate() {
        if let Some(hash) = &column.prompt_set_hash {
            hash_at(&format!("/columns/{index}/promptSetHash"), hash)?;
        }
        if columns.iter().any(|(id, _, _): &(String, String, Option<String>)| *id == column.id) {
            return Err((format!("/columns/{index}/id"), "each column once".into()));
        }
        columns.push((column.id, column.label, column.prompt_set_hash));
    }
    let known: BTreeSet<&str> = columns.iter().map(|(id, _, _)| id.as_str()).collect();
    let mut cells = BTreeMap::new();
    for (r, row) in raw.rows.into_iter().enumerate() {
        for (c, cell) in row.cells.into_iter().enumerate() {
            let at = format!("/rows/{r}/cells/{c}");
            if !known.contains(cell.column_id.as_str()) {
                return Err((format!("{at}/columnId"), "the id of a column the manifest declares".into()));
            }
            let key = (row.case_id.clone(), row.condition_id.clone(), cell.column_id);
            let read = ReadCell {
                status: cell.status,
                refused_by: cell.refused_by,
                reason_codes: cell.reason_codes,
                causes: cell.causes,
            };
            if cells.insert(key, read).is_some() {
                return Err((at, "each (case, condition, column) once".into()));
            }
        }
    }
    let mut families = BTreeMap::new();
    for group in raw.families {
        for row in group.rows {
            families.insert((row.case_id, row.condition_id), group.family);
        }
    }
    Ok(ReadManifest {
        path: PathBuf::new(),
        shape,
        judge_version: raw.judge_version,
        rules_version: raw.rules_version,
        hash_scheme: raw.hash_scheme.unwrap_or_else(|| SHAREDOS_HASH_SCHEME.to_string()),
        harness_version: None,
        case_set_hash: raw.case_set_hash,
        world_set_hash: raw.world_set_hash,
        columns,
        cells,
        families,
    })
}
