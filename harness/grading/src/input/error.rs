//! Why a suite file cannot be used: one error type whose kind is a closed
//! vocabulary, naming the file, the JSON pointer and what was expected
//! there, and the [`Site`] every check builds its refusals from.

use sharedos_model::validate;
use std::path::{Path, PathBuf};

/// What is wrong with a suite file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoadErrorKind {
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
    /// The bytes are not one TOML document of the expected shape.
    InvalidToml,
    /// A baseline names a cell the suite does not have.
    UnknownCell,
}

/// A suite file that cannot be used: the file (relative to the suite root),
/// the JSON pointer of the offending value (empty for the whole document)
/// and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: at {}: expected {expected}", file.display(), shown_pointer(pointer))]
pub struct LoadError {
    /// What is wrong.
    pub kind: LoadErrorKind,
    /// The file, relative to the suite root.
    pub file: PathBuf,
    /// JSON pointer of the offending value.
    pub pointer: String,
    /// What the format expects at that place.
    pub expected: String,
}

impl LoadError {
    /// The file, relative to the suite root.
    #[must_use]
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// JSON pointer of the offending value (empty for the whole document).
    #[must_use]
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// What the format expects at that place.
    #[must_use]
    pub fn expected(&self) -> &str {
        &self.expected
    }
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

    fn error(&self, kind: LoadErrorKind, expected: impl Into<String>) -> LoadError {
        LoadError { kind, file: self.file.to_path_buf(), pointer: self.pointer.clone(), expected: expected.into() }
    }

    /// A cell the suite does not have.
    pub(crate) fn unknown_cell(&self, expected: impl Into<String>) -> LoadError {
        self.error(LoadErrorKind::UnknownCell, expected)
    }

    /// A value outside its bounds.
    pub(crate) fn out_of_bounds(&self, expected: impl Into<String>) -> LoadError {
        self.error(LoadErrorKind::OutOfBounds, expected)
    }

    /// A value outside a closed vocabulary.
    pub(crate) fn unknown_value(&self, expected: impl Into<String>) -> LoadError {
        self.error(LoadErrorKind::UnknownValue, expected)
    }

    /// A repeated entry inside one file.
    pub(crate) fn duplicate_entry(&self, expected: impl Into<String>) -> LoadError {
        self.error(LoadErrorKind::DuplicateEntry, expected)
    }

    /// An attempt breaking a shape rule.
    pub(crate) fn invalid_attempt(&self, expected: impl Into<String>) -> LoadError {
        self.error(LoadErrorKind::InvalidAttempt, expected)
    }

    /// A tool the world does not know.
    pub(crate) fn unknown_tool(&self, name: &str) -> LoadError {
        let known = sharedos_world::vocabulary::known_tools().join(", ");
        let expected = format!("a tool the conformance world knows, not `{name}` (one of {known})");
        self.error(LoadErrorKind::UnknownTool, expected)
    }

    /// A grant the world never issues.
    pub(crate) fn unknown_grant(&self, id: &str) -> LoadError {
        let known = sharedos_world::vocabulary::known_grants();
        let expected = format!("a grant the conformance world issues, not `{id}` (one of {})", known.join(", "));
        self.error(LoadErrorKind::UnknownGrant, expected)
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
