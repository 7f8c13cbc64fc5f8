//! Known failures: a TOML file listing cells expected to fail, each with a
//! reason, so a runtime part-way to conformance keeps CI green on them and
//! red on any other failure. A listed cell that no longer fails is stale:
//! the run fails until its entry goes, so the file only ever shrinks.
//!
//! ```toml
//! version = 1
//!
//! [[known-failure]]
//! case = "forged-grant"
//! condition = "baseline"
//! column = "process:acme"
//! reason = "grant forgery detection lands in 2.3"
//! ```

use crate::input::built_in_column::column_ids;
use crate::input::error::{LoadError, LoadErrorKind, Site};
use crate::input::loader::{read_text, Suite};
use crate::vocab::CellKey;
use serde::Deserialize;
use sharedos_conformance_metadata::repeats::Outcome;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The baseline format's version.
pub const BASELINE_VERSION: u32 = 1;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
struct BaselineFile {
    version: u32,
    #[serde(default)]
    known_failure: Vec<KnownFailure>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KnownFailure {
    case: String,
    condition: String,
    column: String,
    reason: String,
}

/// A loaded baseline: the known failures by cell, with their reasons.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline {
    /// The file it came from.
    pub file: PathBuf,
    entries: BTreeMap<CellKey, String>,
}

/// What the baseline makes of one cell's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub enum BaselineVerdict<'a> {
    /// Not listed: the verdict stands.
    Unlisted,
    /// Listed, and it fails as expected: it does not fail the run.
    KnownFailure {
        /// Why it is expected to fail.
        reason: &'a str,
    },
    /// Listed, but it no longer fails: it fails the run until removed.
    Stale {
        /// The reason the entry gave.
        reason: &'a str,
    },
}

impl<'a> BaselineVerdict<'a> {
    /// A listed cell's verdict as `--format jsonl` spells it
    /// (`known_failure`, `stale`) with the entry's reason; `None` unlisted.
    #[must_use]
    pub fn listed(self) -> Option<(&'static str, &'a str)> {
        match self {
            BaselineVerdict::Unlisted => None,
            BaselineVerdict::KnownFailure { reason } => Some(("known_failure", reason)),
            BaselineVerdict::Stale { reason } => Some(("stale", reason)),
        }
    }
}

impl Baseline {
    /// What the baseline says of `key` with this outcome (a single run's
    /// verdict, or what a repeated cell's runs come to).
    pub fn verdict(&self, key: &CellKey, outcome: impl Into<Outcome>) -> BaselineVerdict<'_> {
        match self.entries.get(key) {
            None => BaselineVerdict::Unlisted,
            Some(reason) if outcome.into().breaks_build() => BaselineVerdict::KnownFailure { reason },
            Some(reason) => BaselineVerdict::Stale { reason },
        }
    }

    /// Whether a cell with this outcome (a single run's verdict, or what
    /// a repeated cell's runs come to, [`Cell::outcome`]) fails the run.
    ///
    /// [`Cell::outcome`]: sharedos_conformance_metadata::Cell::outcome
    #[must_use]
    pub fn fails_run(&self, key: &CellKey, outcome: impl Into<Outcome>) -> bool {
        let outcome = outcome.into();
        match self.verdict(key, outcome) {
            BaselineVerdict::Unlisted => outcome.breaks_build(),
            BaselineVerdict::KnownFailure { .. } => false,
            BaselineVerdict::Stale { .. } => true,
        }
    }

    /// How many cells it lists.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it lists none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Reads and checks the baseline at `path` against `suite`.
///
/// # Errors
/// When it cannot be read, is not a baseline, or names a cell the suite
/// does not have (at its pointer).
pub fn load_baseline(path: &Path, suite: &Suite) -> Result<Baseline, LoadError> {
    parse_baseline(path, &read_text(Path::new(""), path)?, suite)
}

/// Parses and checks a baseline's text (from `path`) against `suite`.
///
/// # Errors
/// As [`load_baseline`], but for reading.
pub fn parse_baseline(path: &Path, text: &str, suite: &Suite) -> Result<Baseline, LoadError> {
    let error = |kind, expected: String| LoadError { kind, file: path.to_path_buf(), pointer: String::new(), expected };
    let parsed: BaselineFile = toml::from_str(text).map_err(|e| {
        let at = e.span().map(|span| line_of(text, span.start)).map_or_else(String::new, |l| format!(" (line {l})"));
        error(LoadErrorKind::InvalidToml, format!("a baseline file{at}: {}", e.message()))
    })?;
    let root = Site::root(path);
    if parsed.version != BASELINE_VERSION {
        return Err(root.child("version").out_of_bounds(format!("version {BASELINE_VERSION}")));
    }
    let known_columns = column_ids(&suite.seats);
    let mut entries = BTreeMap::new();
    for (index, entry) in parsed.known_failure.into_iter().enumerate() {
        let site = root.child("known-failure").index(index);
        let case =
            suite.case(&entry.case).ok_or_else(|| site.child("case").unknown_cell("the id of a case of the suite"))?;
        if case.condition(&entry.condition).is_none() {
            return Err(site.child("condition").unknown_cell(format!("a condition of case `{}`", case.id)));
        }
        if !known_columns.contains(&entry.column) {
            let ids = known_columns.join(", ");
            return Err(site.child("column").unknown_cell(format!("a column id (one of {ids})")));
        }
        if entry.reason.trim().is_empty() {
            return Err(site.child("reason").out_of_bounds("a reason: why the cell is expected to fail"));
        }
        let key = CellKey { case: entry.case, condition: entry.condition, column: entry.column };
        if entries.insert(key, entry.reason).is_some() {
            return Err(site.duplicate_entry("each cell listed once"));
        }
    }
    Ok(Baseline { file: path.to_path_buf(), entries })
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset).map_or(1, |before| before.matches('\n').count() + 1)
}
