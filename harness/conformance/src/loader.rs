//! Loading the suite: every adversary and case file, refused whole on the
//! first problem, before anything runs.
//!
//! Files are read in file-name order and every refusal names the file
//! (relative to the suite root), the JSON pointer of the offending value and
//! what was expected there, so the first error is the same on every machine.

use crate::case::Case;
use crate::script::AttackScript;
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

macro_rules! load_errors {
    ($($(#[doc = $doc:literal])* $variant:ident,)*) => {
        /// A suite file that cannot be used. Every variant names the file
        /// (relative to the suite root), the JSON pointer of the offending
        /// value (empty for the whole document) and what was expected there.
        #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
        pub enum LoadError {
            $(
                $(#[doc = $doc])*
                #[error("{}: at {}: expected {expected}", file.display(), shown_pointer(pointer))]
                $variant {
                    /// The file, relative to the suite root.
                    file: PathBuf,
                    /// JSON pointer of the offending value.
                    pointer: String,
                    /// What the format expects at that place.
                    expected: String,
                },
            )*
        }

        impl LoadError {
            /// The file, relative to the suite root.
            #[must_use]
            pub fn file(&self) -> &Path {
                match self { $(LoadError::$variant { file, .. } => file,)* }
            }

            /// JSON pointer of the offending value (empty for the whole document).
            #[must_use]
            pub fn pointer(&self) -> &str {
                match self { $(LoadError::$variant { pointer, .. } => pointer,)* }
            }

            /// What the format expects at that place.
            #[must_use]
            pub fn expected(&self) -> &str {
                match self { $(LoadError::$variant { expected, .. } => expected,)* }
            }
        }
    };
}

load_errors! {
    /// A file or folder could not be read.
    Unreadable,
    /// The bytes are not one JSON document.
    InvalidJson,
    /// An object names the same key twice.
    DuplicateKey,
    /// An object has a key its format does not define.
    UnknownKey,
    /// A required key is absent.
    MissingKey,
    /// A value has the wrong JSON type.
    WrongType,
    /// A value is outside its bounds (length, range, format).
    OutOfBounds,
    /// A value is outside a closed vocabulary (role, status, family, ...).
    UnknownValue,
    /// A condition's world names an option the world does not have.
    UnknownWorldOption,
    /// A script's `kind` is not a move kind.
    UnknownMoveKind,
    /// An attempt names a tool the conformance world does not know.
    UnknownTool,
    /// A world option names a grant the conformance world never issues.
    UnknownGrant,
    /// An attempt breaks a shape rule (it must name a tool or an inspection).
    InvalidAttempt,
    /// Two files declare the same script or case id.
    DuplicateId,
    /// One file repeats an attempt id, condition id or list entry.
    DuplicateEntry,
    /// A case names an adversary script no file declares.
    DanglingAdversary,
    /// A file's id differs from its file name.
    IdMismatch,
}

fn shown_pointer(pointer: &str) -> &str {
    if pointer.is_empty() {
        "the document root"
    } else {
        pointer
    }
}

/// A place in a suite file, from which refusals are built.
#[derive(Debug, Clone)]
pub(crate) struct Site<'a> {
    file: &'a Path,
    pointer: String,
}

impl<'a> Site<'a> {
    /// The root of a document.
    pub(crate) fn root(file: &'a Path) -> Site<'a> {
        Site { file, pointer: String::new() }
    }

    /// The value under `key`.
    pub(crate) fn child(&self, key: &str) -> Site<'a> {
        Site { file: self.file, pointer: validate::child(&self.pointer, key) }
    }

    /// The array element at `i`.
    pub(crate) fn index(&self, i: usize) -> Site<'a> {
        Site { file: self.file, pointer: validate::index(&self.pointer, i) }
    }

    fn error(&self, make: fn(PathBuf, String, String) -> LoadError, expected: impl Into<String>) -> LoadError {
        make(self.file.to_path_buf(), self.pointer.clone(), expected.into())
    }

    /// A value outside its bounds.
    pub(crate) fn out_of_bounds(&self, expected: impl Into<String>) -> LoadError {
        self.error(|file, pointer, expected| LoadError::OutOfBounds { file, pointer, expected }, expected)
    }

    /// A value outside a closed vocabulary.
    pub(crate) fn unknown_value(&self, expected: impl Into<String>) -> LoadError {
        self.error(|file, pointer, expected| LoadError::UnknownValue { file, pointer, expected }, expected)
    }

    /// A repeated entry inside one file.
    pub(crate) fn duplicate_entry(&self, expected: impl Into<String>) -> LoadError {
        self.error(|file, pointer, expected| LoadError::DuplicateEntry { file, pointer, expected }, expected)
    }

    /// An attempt breaking a shape rule.
    pub(crate) fn invalid_attempt(&self, expected: impl Into<String>) -> LoadError {
        self.error(|file, pointer, expected| LoadError::InvalidAttempt { file, pointer, expected }, expected)
    }

    /// A tool the world does not know.
    pub(crate) fn unknown_tool(&self, name: &str) -> LoadError {
        let known = sharedos_world::vocabulary::known_tools().join(", ");
        let expected = format!("a tool the conformance world knows, not `{name}` (one of {known})");
        self.error(|file, pointer, expected| LoadError::UnknownTool { file, pointer, expected }, expected)
    }

    /// A grant the world never issues.
    pub(crate) fn unknown_grant(&self, id: &str) -> LoadError {
        let known = sharedos_world::vocabulary::known_grants();
        let expected = format!("a grant the conformance world issues, not `{id}` (one of {})", known.join(", "));
        self.error(|file, pointer, expected| LoadError::UnknownGrant { file, pointer, expected }, expected)
    }

    /// Checks an id: 1..=64 characters of `a-z`, `0-9`, `.`, `_`, `-`,
    /// starting with a letter or digit. Ids become execution ids and golden
    /// file names, so they stay portable and cannot climb out of a folder.
    pub(crate) fn id(&self, id: &str) -> Result<(), LoadError> {
        let first_ok = id.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        let rest_ok = id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'));
        if first_ok && rest_ok && id.len() <= 64 {
            Ok(())
        } else {
            Err(self.out_of_bounds(
                "an id of 1..64 characters from a-z, 0-9, '.', '_', '-', starting with a letter or digit",
            ))
        }
    }

    /// Checks prose or reason text: not blank, at most `max` characters.
    pub(crate) fn text(&self, text: &str, max: usize) -> Result<(), LoadError> {
        validate::bounded_text(text, max, &self.pointer).map_err(|e| self.out_of_bounds(e.expected))
    }

    /// Checks a reason code: 1..=64 characters of `a-z`, `0-9`, `_`, starting with a letter.
    pub(crate) fn reason_code(&self, code: &str) -> Result<(), LoadError> {
        let first_ok = code.chars().next().is_some_and(|c| c.is_ascii_lowercase());
        let rest_ok = code.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if first_ok && rest_ok && code.len() <= 64 {
            Ok(())
        } else {
            Err(self.out_of_bounds("a snake_case reason code of 1..64 characters"))
        }
    }

    /// Checks a list length within `min..=max`.
    pub(crate) fn length(&self, len: usize, min: usize, max: usize, what: &str) -> Result<(), LoadError> {
        if (min..=max).contains(&len) {
            Ok(())
        } else {
            Err(self.out_of_bounds(format!("between {min} and {max} {what}")))
        }
    }
}

/// Which format a document is parsed as; decides how serde failures are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Adversary,
    Case,
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
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| name_serde_failure(file, e, format))?;
    deserializer.end().map_err(|e| LoadError::InvalidJson {
        file: file.to_path_buf(),
        pointer: String::new(),
        expected: format!("a single JSON document ({e})"),
    })?;
    Ok(value)
}

/// Names a serde failure by its category and message. serde's data messages
/// are stable in shape (`unknown field`, `invalid type`, ...), and the path
/// comes from `serde_path_to_error`, so no message needs re-parsing for where.
fn name_serde_failure(file: &Path, error: serde_path_to_error::Error<serde_json::Error>, format: Format) -> LoadError {
    let segments = path_segments(error.path());
    let pointer = segments.iter().fold(String::new(), |p, s| validate::child(&p, s));
    let inner = error.into_inner();
    let file = file.to_path_buf();
    let full = inner.to_string();
    let location = format!(" at line {} column {}", inner.line(), inner.column());
    let message = full.strip_suffix(&location).unwrap_or(&full).to_string();
    match inner.classify() {
        Category::Io => LoadError::Unreadable { file, pointer, expected: format!("readable text ({message})") },
        Category::Syntax | Category::Eof => {
            LoadError::InvalidJson { file, pointer, expected: format!("valid JSON ({full})") }
        }
        Category::Data => name_data_failure(file, pointer, &segments, &message, format),
    }
}

fn name_data_failure(file: PathBuf, pointer: String, segments: &[String], message: &str, format: Format) -> LoadError {
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let (name, known) = split_expected(rest);
        let in_world =
            format == Format::Case && segments.len() == 4 && segments[0] == "conditions" && segments[2] == "world";
        return if in_world {
            LoadError::UnknownWorldOption {
                file,
                pointer,
                expected: format!("a known world option, not {name} ({known})"),
            }
        } else {
            LoadError::UnknownKey { file, pointer, expected: format!("a known key, not {name} ({known})") }
        };
    }
    if let Some(rest) = message.strip_prefix("unknown variant ") {
        let (name, known) = split_expected(rest);
        return if format == Format::Adversary && pointer == "/kind" {
            LoadError::UnknownMoveKind { file, pointer, expected: format!("a known move kind, not {name} ({known})") }
        } else {
            LoadError::UnknownValue { file, pointer, expected: format!("a known value, not {name} ({known})") }
        };
    }
    if let Some(name) = message.strip_prefix("missing field ") {
        return LoadError::MissingKey { file, pointer, expected: format!("the required key {name}") };
    }
    if let Some(name) = message.strip_prefix("duplicate field ") {
        return LoadError::DuplicateKey { file, pointer, expected: format!("each key once ({name} repeats)") };
    }
    for prefix in ["invalid value: ", "invalid length "] {
        if let Some(rest) = message.strip_prefix(prefix) {
            let (found, wanted) = split_expected(rest);
            return LoadError::OutOfBounds { file, pointer, expected: format!("{} (found {found})", plain(wanted)) };
        }
    }
    if let Some(rest) = message.strip_prefix("invalid type: ") {
        let (found, wanted) = split_expected(rest);
        return LoadError::WrongType { file, pointer, expected: format!("{} (found {found})", plain(wanted)) };
    }
    LoadError::WrongType { file, pointer, expected: message.to_string() }
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
        Suite { cases, scripts }
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
            return Err(LoadError::DanglingAdversary {
                file,
                pointer: "/adversary".to_string(),
                expected: format!("the id of a script in {ADVERSARIES_DIR}/ (no file declares `{}`)", case.adversary),
            });
        }
        cases.insert(case.id.clone(), case);
    }
    Ok(Suite { cases: cases.into_values().collect(), scripts })
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
        return Err(LoadError::DuplicateId {
            file: file.to_path_buf(),
            pointer: "/id".to_string(),
            expected: format!("an id not already declared (`{id}` is declared by {})", first.display()),
        });
    }
    let stem = file.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".json"));
    if stem != Some(id) {
        return Err(LoadError::IdMismatch {
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
    let unreadable = |e: std::io::Error| LoadError::Unreadable {
        file: PathBuf::from(dir),
        pointer: String::new(),
        expected: format!("a readable folder ({e})"),
    };
    let mut names = Vec::new();
    for entry in std::fs::read_dir(root.join(dir)).map_err(unreadable)? {
        let entry = entry.map_err(unreadable)?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            return Err(LoadError::Unreadable {
                file: PathBuf::from(dir).join(entry.file_name()),
                pointer: String::new(),
                expected: "a UTF-8 file name".to_string(),
            });
        };
        let is_file = entry.file_type().map_err(unreadable)?.is_file();
        if is_file && name.ends_with(".json") && !name.ends_with(".schema.json") {
            names.push(name);
        }
    }
    names.sort();
    Ok(names.into_iter().map(|n| PathBuf::from(dir).join(n)).collect())
}

fn read_text(root: &Path, file: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(root.join(file)).map_err(|e| LoadError::Unreadable {
        file: file.to_path_buf(),
        pointer: String::new(),
        expected: format!("a readable UTF-8 file ({e})"),
    })
}
