//! Reading the manifests `diff` compares: this harness's, from a file or a
//! bundle, and SharedOS's own in every shape its judge versions 1 to 6
//! wrote (with or without world-set and prompt-set hashes, `causes`,
//! `driverIssued`, `turns`). What is read is checked, not trusted: keys
//! outside both shapes, a status outside the vocabulary, a hash that is not
//! 64 lowercase hex, a judge version outside 1–6, a row or cell twice, a
//! cell of an undeclared column — each refused with the file and pointer.

use crate::bundle::{read_regular, MANIFEST_FILE, STATEMENT_FILE};
use crate::statement::Statement;
use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use sharedos_conformance_metadata::manifest::ManifestColumn;
use sharedos_conformance_metadata::repeats::{Outcome, Repeats};
use sharedos_grading::input::case::Family;
use sharedos_grading::vocab::CellStatus;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Whose manifest it is, as its shape tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// This harness's: it states `rulesVersion` and `hashScheme`.
    Harness,
    /// SharedOS's: judge version only, hashes over `localeCompare`-sorted JSON.
    SharedOs,
}

/// An id or code as read. A manifest repeats each in every row and cell,
/// so each distinct one is held once and shared.
pub type Text = Arc<str>;

/// Where a cell is: (case, condition, column).
pub type CellAt = (Text, Text, Text);

/// Where a row is: (case, condition).
pub type RowAt = (Text, Text);

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
    pub columns: Vec<ManifestColumn>,
    /// Every cell by (case, condition, column).
    pub cells: BTreeMap<CellAt, ReadCell>,
    /// The family of each (case, condition), when the manifest groups them.
    pub families: BTreeMap<RowAt, Family>,
}

/// The parts of a cell `diff` compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadCell {
    /// The verdict.
    pub status: CellStatus,
    /// Boundaries that refused.
    pub refused_by: Vec<Text>,
    /// Reason codes.
    pub reason_codes: Vec<Text>,
    /// Causes (`None` in manifests from before they existed).
    pub causes: Option<Vec<Text>>,
    /// Passes out of runs, for a repeated cell (`--repeat`).
    pub runs: Option<RunCount>,
}

/// How many of a repeated cell's runs passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunCount {
    /// Runs that passed (never more than `runs`).
    pub passes: u32,
    /// Runs.
    pub runs: u32,
}

impl RunCount {
    /// Some runs passed and some did not.
    #[must_use]
    pub fn is_flaky(self) -> bool {
        sharedos_conformance_metadata::repeats::is_flaky(self.passes, self.runs)
    }
}

/// What a cell with this verdict (its first run's) and these runs comes to
/// under the one rule (`Outcome`): its verdict, or its sample's.
pub fn outcome_of(status: CellStatus, runs: Option<RunCount>) -> Outcome {
    runs.map_or_else(|| Outcome::of_run(status), |r| Outcome::of_sample(r.passes, r.runs))
}

impl ReadCell {
    /// What the cell comes to under the one rule.
    pub fn outcome(&self) -> Outcome {
        outcome_of(self.status, self.runs)
    }
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
    columns: Vec<ManifestColumn>,
    #[serde(default)]
    families: Vec<RawFamily>,
    // Derived from the cells, which are compared instead.
    #[serde(default)]
    #[allow(dead_code)]
    reason_codes: Vec<serde_json::Value>,
    rows: Rows,
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
    kind: Unkept,
    invariant: Unkept,
    expected_outcome: Unkept,
    condition: Unkept,
    // A value, not skipped: a problem inside it is placed at its pointer.
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
    driver_issued: Option<Vec<Unkept>>,
    not_applicable: u32,
    record_usable: bool,
    record_gaps: Vec<Unkept>,
    turns: Option<u32>,
    detail: Option<Unkept>,
    repeats: Option<Repeats>,
}

/// A string `diff` does not compare: its type is checked as a `String`'s
/// would be, with the same words, but it is not kept, so a manifest's
/// prose costs no memory (a `Vec` of these allocates nothing).
struct Unkept;

impl<'de> Deserialize<'de> for Unkept {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Skip;
        impl Visitor<'_> for Skip {
            type Value = Unkept;
            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, _: &str) -> Result<Unkept, E> {
                Ok(Unkept)
            }
        }
        deserializer.deserialize_str(Skip)
    }
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
    // The bytes are let go once parsed, before the cells are gathered.
    let raw = {
        let bytes = read_regular(&file).map_err(|e| ReadError {
            file: file.clone(),
            pointer: String::new(),
            expected: format!("a readable manifest, a regular file ({e})"),
        })?;
        deserialize(&file, &bytes)?
    };
    let mut read = checked(&file, raw)?;
    read.path = path.to_path_buf();
    read.harness_version = harness_version;
    Ok(read)
}

/// Reads a manifest's bytes (from `file`).
///
/// # Errors
/// When they are not a manifest of a known shape.
pub fn parse_manifest(file: &Path, bytes: &[u8]) -> Result<ReadManifest, ReadError> {
    checked(file, deserialize(file, bytes)?)
}

fn deserialize(file: &Path, bytes: &[u8]) -> Result<RawManifest, ReadError> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|e| ReadError {
        file: file.to_path_buf(),
        pointer: pointer_of(e.path()),
        expected: format!("a conformance manifest of this harness or of SharedOS ({})", e.inner()),
    })
}

fn checked(file: &Path, raw: RawManifest) -> Result<ReadManifest, ReadError> {
    let mut read =
        check(raw).map_err(|(pointer, expected)| ReadError { file: file.to_path_buf(), pointer, expected })?;
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

/// Each distinct string read, held once: the ids and codes of a manifest
/// repeat in every row, and sharing them keeps what is read proportional
/// to what differs.
#[derive(Default)]
struct Interner(HashSet<Text>);

impl Interner {
    fn text(&mut self, text: &str) -> Text {
        if let Some(held) = self.0.get(text) {
            return Arc::clone(held);
        }
        let held: Text = Arc::from(text);
        self.0.insert(Arc::clone(&held));
        held
    }

    fn all(&mut self, texts: &[String]) -> Vec<Text> {
        texts.iter().map(|text| self.text(text)).collect()
    }
}

/// A cell's place in the document: row index, cell index.
type Position = (usize, usize);

/// The rows, gathered into cells as they are read: each row is let go as
/// soon as its cells are kept, so a manifest is never held twice. What
/// only the whole document can tell (whether a column is declared) is
/// noted here and refused by [`check`], after serde has read everything,
/// so the first problem reported is the same whatever the keys' order.
#[derive(Default)]
struct Rows {
    interner: Interner,
    cells: BTreeMap<CellAt, ReadCell>,
    /// Where each column id is first used.
    first_use: HashMap<Text, Position>,
    /// The first cell given a second time.
    twice: Option<Position>,
    /// The first cell whose repeats are not what its runs' statuses make.
    wrong_repeats: Option<Position>,
}

impl Rows {
    fn add(&mut self, r: usize, row: RawRow) {
        let (case, condition) = (self.interner.text(&row.case_id), self.interner.text(&row.condition_id));
        for (c, cell) in row.cells.into_iter().enumerate() {
            let column = self.interner.text(&cell.column_id);
            if !self.first_use.contains_key(&*column) {
                self.first_use.insert(Arc::clone(&column), (r, c));
            }
            // Repeats are checked as `verify` checks them against the
            // evidence, from what the manifest itself states: counts that
            // disagree with the statuses would otherwise be trusted by
            // the significance test.
            let first_run_shown = cell.repeats.as_ref().is_none_or(|r| r.statuses.first() == Some(&cell.status));
            if !cell.repeats.as_ref().is_none_or(Repeats::holds) || !first_run_shown {
                self.wrong_repeats.get_or_insert((r, c));
            }
            let read = ReadCell {
                status: cell.status,
                refused_by: self.interner.all(&cell.refused_by),
                reason_codes: self.interner.all(&cell.reason_codes),
                causes: cell.causes.as_deref().map(|causes| self.interner.all(causes)),
                runs: cell.repeats.map(|r| RunCount { passes: r.passes, runs: r.runs }),
            };
            if self.cells.insert((Arc::clone(&case), Arc::clone(&condition), column), read).is_some() {
                self.twice.get_or_insert((r, c));
            }
        }
    }

    /// The first cell, in document order, of an undeclared column or given
    /// twice.
    fn refusal(&self, columns: &[ManifestColumn]) -> Result<(), Refusal> {
        let declared: HashSet<&str> = columns.iter().map(|c| c.id.as_str()).collect();
        let undeclared = self.first_use.iter().filter(|(id, _)| !declared.contains(&***id)).map(|(_, at)| *at).min();
        let undeclared = undeclared.map(|(r, c)| {
            ((r, c), format!("/rows/{r}/cells/{c}/columnId"), "the id of a column the manifest declares")
        });
        let twice =
            self.twice.map(|(r, c)| ((r, c), format!("/rows/{r}/cells/{c}"), "each (case, condition, column) once"));
        let wrong_repeats = self.wrong_repeats.map(|(r, c)| {
            ((r, c), format!("/rows/{r}/cells/{c}/repeats"), "repeats of two or more runs whose counts, interval, pass^k and pass@k are those of its statuses, the first of them the cell's status")
        });
        // The first problem in document order; a cell given twice is a
        // later one than the first use of its column.
        match [undeclared, twice, wrong_repeats].into_iter().flatten().min_by_key(|(at, _, _)| *at) {
            Some((_, pointer, expected)) => Err((pointer, expected.into())),
            None => Ok(()),
        }
    }
}

impl<'de> Deserialize<'de> for Rows {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Each;
        impl<'de> Visitor<'de> for Each {
            type Value = Rows;
            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                // As a `Vec` says it.
                formatter.write_str("a sequence")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Rows, A::Error> {
                let mut rows = Rows::default();
                let mut r = 0;
                while let Some(row) = seq.next_element::<RawRow>()? {
                    rows.add(r, row);
                    r += 1;
                }
                Ok(rows)
            }
        }
        deserializer.deserialize_seq(Each)
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
    check_columns(&raw.columns)?;
    raw.rows.refusal(&raw.columns)?;
    let Rows { mut interner, cells, .. } = raw.rows;
    let mut families = BTreeMap::new();
    for group in raw.families {
        for row in group.rows {
            families.insert((interner.text(&row.case_id), interner.text(&row.condition_id)), group.family);
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
        columns: raw.columns,
        cells,
        families,
    })
}

/// Each column's hash, and each id once: the first problem in column order.
fn check_columns(columns: &[ManifestColumn]) -> Result<(), Refusal> {
    let mut seen: HashSet<&str> = HashSet::with_capacity(columns.len());
    for (index, column) in columns.iter().enumerate() {
        if let Some(hash) = &column.prompt_set_hash {
            hash_at(&format!("/columns/{index}/promptSetHash"), hash)?;
        }
        if !seen.insert(column.id.as_str()) {
            return Err((format!("/columns/{index}/id"), "each column once".into()));
        }
    }
    Ok(())
}
