//! Loading the suite: every adversary and case file, refused whole on the
//! first problem, before anything runs.
//!
//! Files are read in file-name order and every refusal names the file
//! (relative to the suite root), the JSON pointer of the offending value and
//! what was expected there, so the first error is the same on every machine.

use crate::input::case::Case;
use crate::input::error::{LoadError, LoadErrorKind, Site};
use crate::input::file::{read_regular, Links};
use crate::input::script::AttackScript;
use crate::input::seat::{Seat, SeatFile, SEATS_DIR};
use rayon::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::error::Category;
use sharedos_model::validate;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Folder of adversary scripts under the suite root.
pub const ADVERSARIES_DIR: &str = "adversaries";
/// Folder of cases under the suite root.
pub const CASES_DIR: &str = "cases";

/// Which format a document is parsed as; decides how serde failures are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Adversary,
    Case,
    Seat,
}

/// Parses and checks one adversary file's text. `file` is the name used in
/// refusals; the id-versus-file-name rule is the loader's, not checked here.
///
/// # Errors
/// The first problem found, with its pointer.
pub fn parse_script(file: &Path, text: &str) -> Result<AttackScript, LoadError> {
    let script: AttackScript = parse_document(file, text, Format::Adversary)?;
    script.check(&Site::root(file))?;
    Ok(script)
}

/// Parses and checks one seat file's text; `folder` is where its relative
/// working directory starts.
///
/// # Errors
/// The first problem found, with its pointer.
pub fn parse_seat(file: &Path, folder: &Path, text: &str) -> Result<Seat, LoadError> {
    let seat: SeatFile = parse_document(file, text, Format::Seat)?;
    seat.into_seat(file, folder)
}

/// Reads a seat file from anywhere (`--seat FILE`).
///
/// # Errors
/// When it cannot be read, or does not parse or validate.
pub fn load_seat(path: &Path) -> Result<Seat, LoadError> {
    let text = read_text(Path::new(""), path)?;
    let folder = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let folder = std::fs::canonicalize(&folder).unwrap_or(folder);
    parse_seat(path, &folder, &text)
}

/// Parses and checks one case file's text (without resolving its adversary).
///
/// # Errors
/// The first problem found, with its pointer.
pub fn parse_case(file: &Path, text: &str) -> Result<Case, LoadError> {
    let case: Case = parse_document(file, text, Format::Case)?;
    case.check(&Site::root(file))?;
    Ok(case)
}

fn parse_document<T: DeserializeOwned>(file: &Path, text: &str, format: Format) -> Result<T, LoadError> {
    // Tracking the path of every value slows the parse of a good file, so a
    // file is read once without it and only a failing one again with it.
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value =
        serde_path_to_error::deserialize(&mut deserializer).map_err(|e| name_serde_failure(file, text, e, format))?;
    deserializer.end().map_err(|e| LoadError {
        kind: LoadErrorKind::InvalidJson,
        file: file.to_path_buf(),
        pointer: String::new(),
        expected: format!("a single JSON document ({e})"),
    })?;
    Ok(value)
}

/// Names a serde failure by its category and message. serde's data messages
/// are stable in shape (`unknown field`, `invalid type`, ...), and the path
/// comes from `serde_path_to_error`, so no message needs re-parsing for where.
fn name_serde_failure(
    file: &Path,
    text: &str,
    error: serde_path_to_error::Error<serde_json::Error>,
    format: Format,
) -> LoadError {
    let segments = path_segments(error.path());
    let pointer = segments.iter().fold(String::new(), |p, s| validate::child(&p, s));
    let inner = error.into_inner();
    let file = file.to_path_buf();
    let full = inner.to_string();
    let location = format!(" at line {} column {}", inner.line(), inner.column());
    let message = full.strip_suffix(&location).unwrap_or(&full).to_string();
    match inner.classify() {
        Category::Io => {
            LoadError { kind: LoadErrorKind::Unreadable, file, pointer, expected: format!("readable text ({message})") }
        }
        Category::Syntax | Category::Eof => match serde_json::from_str::<serde_json::Value>(text) {
            // Valid JSON that serde stopped in: a closed vocabulary (an
            // enum) given a value of another JSON type, which serde_json
            // reports as a syntax error.
            Ok(document) => {
                let found = document.pointer(&pointer).map_or("nothing", json_type);
                let expected = format!("a string from the field's vocabulary (found {found})");
                LoadError { kind: LoadErrorKind::WrongType, file, pointer, expected }
            }
            Err(_) => {
                LoadError { kind: LoadErrorKind::InvalidJson, file, pointer, expected: format!("valid JSON ({full})") }
            }
        },
        Category::Data => name_data_failure(file, pointer, &segments, &message, format),
    }
}

fn name_data_failure(file: PathBuf, pointer: String, segments: &[String], message: &str, format: Format) -> LoadError {
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let (name, known) = split_expected(rest);
        let in_world =
            format == Format::Case && segments.len() == 4 && segments[0] == "conditions" && segments[2] == "world";
        return if in_world {
            LoadError {
                kind: LoadErrorKind::UnknownWorldOption,
                file,
                pointer,
                expected: format!("a known world option, not {name} ({known})"),
            }
        } else {
            LoadError {
                kind: LoadErrorKind::UnknownKey,
                file,
                pointer,
                expected: format!("a known key, not {name} ({known})"),
            }
        };
    }
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        let (name, known) = split_expected(rest);
        return if format == Format::Adversary && pointer == "/kind" {
            LoadError {
                kind: LoadErrorKind::UnknownMoveKind,
                file,
                pointer,
                expected: format!("a known move kind, not {name} ({known})"),
            }
        } else {
            LoadError {
                kind: LoadErrorKind::UnknownValue,
                file,
                pointer,
                expected: format!("a known value, not {name} ({known})"),
            }
        };
    }
    if let Some(name) = message.strip_prefix("missing field ") {
        return LoadError {
            kind: LoadErrorKind::MissingKey,
            file,
            pointer,
            expected: format!("the required key {name}"),
        };
    }
    if let Some(name) = message.strip_prefix("duplicate field ") {
        return LoadError {
            kind: LoadErrorKind::DuplicateKey,
            file,
            pointer,
            expected: format!("each key once ({name} repeats)"),
        };
    }
    for prefix in ["invalid value: ", "invalid length "] {
        if let Some(rest) = message.strip_prefix(prefix) {
            let (found, wanted) = split_expected(rest);
            return LoadError {
                kind: LoadErrorKind::OutOfBounds,
                file,
                pointer,
                expected: format!("{} (found {found})", plain(wanted)),
            };
        }
    }
    if let Some(rest) = message.strip_prefix("invalid type: ") {
        let (found, wanted) = split_expected(rest);
        return LoadError {
            kind: LoadErrorKind::WrongType,
            file,
            pointer,
            expected: format!("{} (found {found})", plain(wanted)),
        };
    }
    LoadError { kind: LoadErrorKind::WrongType, file, pointer, expected: message.to_string() }
}

/// A JSON value's type, as a reader names it.
fn json_type(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// serde's names for Rust types, in JSON terms.
fn plain(wanted: &str) -> &str {
    match wanted {
        "u8" | "u16" | "u32" | "u64" => "a whole number that is not negative and fits the field",
        "a map" => "a JSON object",
        "a sequence" => "a JSON array",
        other => other,
    }
}

/// Splits serde's "`x`, expected y" into ("`x`", "y").
fn split_expected(rest: &str) -> (&str, &str) {
    match rest.split_once(", expected ") {
        Some((found, wanted)) => (found, wanted),
        None => (rest, "see the JSON Schema"),
    }
}

fn path_segments(path: &serde_path_to_error::Path) -> Vec<String> {
    use serde_path_to_error::Segment;
    path.iter()
        .filter_map(|segment| match segment {
            Segment::Seq { index } => Some(index.to_string()),
            Segment::Map { key } => Some(key.clone()),
            Segment::Enum { .. } | Segment::Unknown => None,
        })
        .collect()
}

/// The loaded suite: every case (sorted by id) and every adversary script
/// (keyed, and so sorted, by id).
#[derive(Debug, Clone, PartialEq)]
pub struct Suite {
    /// Cases, sorted by id.
    pub cases: Vec<Case>,
    /// Adversary scripts by id.
    pub scripts: BTreeMap<String, AttackScript>,
    /// Seats of process columns, sorted by column id.
    pub seats: Vec<Seat>,
}

impl Suite {
    /// The case with this id.
    #[must_use]
    pub fn case(&self, id: &str) -> Option<&Case> {
        self.cases.iter().find(|c| c.id == id)
    }

    /// The script with this id.
    #[must_use]
    pub fn script(&self, id: &str) -> Option<&AttackScript> {
        self.scripts.get(id)
    }

    /// The script a case runs. Always present in a loaded suite.
    #[must_use]
    pub fn script_for(&self, case: &Case) -> Option<&AttackScript> {
        self.scripts.get(&case.adversary)
    }

    /// Conditions over all cases (the number of matrix rows).
    #[must_use]
    pub fn condition_count(&self) -> usize {
        self.cases.iter().map(|c| c.conditions.len()).sum()
    }

    /// The cases `keep` accepts, with only the scripts they use.
    #[must_use]
    pub fn select(&self, keep: impl Fn(&Case) -> bool) -> Suite {
        let cases: Vec<Case> = self.cases.iter().filter(|c| keep(c)).cloned().collect();
        let scripts = self
            .scripts
            .iter()
            .filter(|(id, _)| cases.iter().any(|c| &c.adversary == *id))
            .map(|(id, s)| (id.clone(), s.clone()))
            .collect();
        Suite { cases, scripts, seats: self.seats.clone() }
    }

    /// Adds a seat from outside the suite.
    ///
    /// # Errors
    /// When a seat with the same column id is already there.
    pub fn add_seat(&mut self, seat: Seat) -> Result<(), LoadError> {
        if self.seats.iter().any(|s| s.column_id == seat.column_id) {
            return Err(LoadError {
                kind: LoadErrorKind::DuplicateId,
                file: seat.file.clone(),
                pointer: "/name".to_string(),
                expected: format!("a seat name no other seat uses (`{}` is taken)", seat.column_id),
            });
        }
        self.seats.push(seat);
        self.seats.sort_by(|a, b| a.column_id.cmp(&b.column_id));
        Ok(())
    }
}

/// Loads `adversaries/*.json` and `cases/*.json` under `root` (files ending in
/// `.schema.json` are skipped), in file-name order.
///
/// # Errors
/// The first file that does not parse or check: invalid JSON, an unknown
/// key, world option, move kind, tool or grant, a wrong type, a value out of
/// bounds, a duplicate id, a case naming a missing adversary, or an id that
/// differs from its file name.
pub fn load_suite(root: &Path) -> Result<Suite, LoadError> {
    let mut scripts: BTreeMap<String, AttackScript> = BTreeMap::new();
    let mut script_files: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (file, script) in parse_all(root, ADVERSARIES_DIR, parse_script)? {
        let script = script?;
        claim_id(&file, &script.id, &mut script_files)?;
        scripts.insert(script.id.clone(), script);
    }
    let mut cases: BTreeMap<String, Case> = BTreeMap::new();
    let mut case_files: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (file, case) in parse_all(root, CASES_DIR, parse_case)? {
        let case = case?;
        claim_id(&file, &case.id, &mut case_files)?;
        if !scripts.contains_key(&case.adversary) {
            return Err(LoadError {
                kind: LoadErrorKind::DanglingAdversary,
                file,
                pointer: "/adversary".to_string(),
                expected: format!("the id of a script in {ADVERSARIES_DIR}/ (no file declares `{}`)", case.adversary),
            });
        }
        cases.insert(case.id.clone(), case);
    }
    let mut suite = Suite { cases: cases.into_values().collect(), scripts, seats: Vec::new() };
    for seat in load_committed_seats(root)? {
        suite.add_seat(seat)?;
    }
    Ok(suite)
}

/// The suite's documents (every case and adversary file), relative to
/// `root`, in file order: what a certification bundle carries as the suite.
///
/// # Errors
/// When a folder cannot be listed.
pub fn suite_documents(root: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let mut files = list_documents(root, ADVERSARIES_DIR)?;
    files.extend(list_documents(root, CASES_DIR)?);
    Ok(files)
}

/// Every seat file of `harness/seats/` (none when the folder is absent).
fn load_committed_seats(root: &Path) -> Result<Vec<Seat>, LoadError> {
    if !root.join(SEATS_DIR).is_dir() {
        return Ok(Vec::new());
    }
    let folder = std::fs::canonicalize(root.join(SEATS_DIR)).unwrap_or_else(|_| root.join(SEATS_DIR));
    let mut seats = Vec::new();
    for file in list_documents(root, SEATS_DIR)? {
        let text = read_text(root, &file)?;
        seats.push(parse_seat(&file, &folder, &text)?);
    }
    Ok(seats)
}

/// A document and what parsing it gave.
type Parsed<T> = (PathBuf, Result<T, LoadError>);

/// Every document of `dir`, read and parsed in parallel, in file order:
/// the caller takes the results in that order, so the error it reports is
/// the first file's whatever the scheduling.
fn parse_all<T: Send>(
    root: &Path,
    dir: &str,
    parse: fn(&Path, &str) -> Result<T, LoadError>,
) -> Result<Vec<Parsed<T>>, LoadError> {
    let files = list_documents(root, dir)?;
    let parsed: Vec<Result<T, LoadError>> =
        files.par_iter().map(|file| read_text(root, file).and_then(|text| parse(file, &text))).collect();
    Ok(files.into_iter().zip(parsed).collect())
}

/// Records `id` as declared by `file`, refusing a second declaration and a
/// file name that differs from the id.
fn claim_id(file: &Path, id: &str, seen: &mut BTreeMap<String, PathBuf>) -> Result<(), LoadError> {
    if let Some(first) = seen.get(id) {
        return Err(LoadError {
            kind: LoadErrorKind::DuplicateId,
            file: file.to_path_buf(),
            pointer: "/id".to_string(),
            expected: format!("an id not already declared (`{id}` is declared by {})", first.display()),
        });
    }
    let stem = file.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".json"));
    if stem != Some(id) {
        return Err(LoadError {
            kind: LoadErrorKind::IdMismatch,
            file: file.to_path_buf(),
            pointer: "/id".to_string(),
            expected: format!("the id to match the file name (file `{}.json` declares `{id}`)", stem.unwrap_or("?")),
        });
    }
    seen.insert(id.to_string(), file.to_path_buf());
    Ok(())
}

/// The `*.json` files (not `*.schema.json`) in `root/dir`, as paths relative
/// to `root`, sorted by file name.
fn list_documents(root: &Path, dir: &str) -> Result<Vec<PathBuf>, LoadError> {
    let unreadable = |e: std::io::Error| LoadError {
        kind: LoadErrorKind::Unreadable,
        file: PathBuf::from(dir),
        pointer: String::new(),
        expected: format!("a readable folder ({e})"),
    };
    let mut names = Vec::new();
    for entry in std::fs::read_dir(root.join(dir)).map_err(unreadable)? {
        let entry = entry.map_err(unreadable)?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            return Err(LoadError {
                kind: LoadErrorKind::Unreadable,
                file: PathBuf::from(dir).join(entry.file_name()),
                pointer: String::new(),
                expected: "a UTF-8 file name".to_string(),
            });
        };
        // Every document is listed, whatever it is, so a link is followed
        // and a FIFO or folder named like one is refused when read, never
        // skipped in silence.
        if name.ends_with(".json") && !name.ends_with(".schema.json") {
            names.push(name);
        }
    }
    names.sort();
    Ok(names.into_iter().map(|n| PathBuf::from(dir).join(n)).collect())
}

/// Reads a suite document (`file`, relative to `root`) as UTF-8 text.
///
/// # Errors
/// `Unreadable` when it is absent, not a regular file, or not UTF-8.
pub fn read_text(root: &Path, file: &Path) -> Result<String, LoadError> {
    let unreadable = |detail: String| LoadError {
        kind: LoadErrorKind::Unreadable,
        file: file.to_path_buf(),
        pointer: String::new(),
        expected: format!("a readable UTF-8 regular file ({detail})"),
    };
    let bytes = read_regular(&root.join(file), Links::Follow).map_err(|e| unreadable(e.to_string()))?;
    if bytes.starts_with(b"\xef\xbb\xbf") {
        return Err(LoadError {
            kind: LoadErrorKind::InvalidJson,
            file: file.to_path_buf(),
            pointer: String::new(),
            expected: "UTF-8 without a byte-order mark (the file starts with one; JSON forbids it)".to_string(),
        });
    }
    String::from_utf8(bytes).map_err(|e| unreadable(e.to_string()))
}
