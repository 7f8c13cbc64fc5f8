//! Committed verdicts of columns that have no golden files (`--verdicts
//! FILE`): a real-clock column's records carry wall time, so no two runs
//! are byte-identical, but its verdicts must be. `run` writes the manifest
//! to FILE (and its Markdown beside it) when a verdict moved or the file is
//! new, so an unchanged column leaves the file alone; `check` compares the
//! fresh verdicts with FILE through `diff`'s engine, and any moved cell,
//! rules or case set, or added or removed column, is drift.

use crate::compare::diff::{diff, Diff};
use crate::compare::read::{parse_manifest, read_manifest};
use sharedos_grading::output::atomic::write_if_changed;
use std::path::{Path, PathBuf};

/// What comparing or writing the verdicts found: drift (for `check`), and
/// files that could not be written or read.
#[derive(Debug, Default)]
pub struct VerdictsOutcome {
    /// Each way the fresh verdicts differ from the committed ones.
    pub drift: Vec<String>,
    /// Each file that could not be written.
    pub unwritten: Vec<String>,
    /// A committed file that is not a manifest: never written over.
    pub unreadable: Vec<String>,
    /// What moved, when the verdicts were written anew.
    pub written: Vec<String>,
}

/// The Markdown file beside `file`.
#[must_use]
pub fn markdown_path(file: &Path) -> PathBuf {
    file.with_extension("md")
}

/// A run's verdicts: its manifest as committed, and its Markdown rendering.
#[derive(Debug, Clone, Copy)]
pub struct Verdicts<'a> {
    /// The manifest's JSON.
    pub manifest_json: &'a str,
    /// Its Markdown rendering.
    pub markdown: &'a str,
}

/// Compares `verdicts` with `file`; when `write`, writes them
/// there (and the Markdown beside it) if they moved or `file` is new. A
/// `file` that is there but is no manifest is left alone.
pub fn compare_or_write(file: &Path, verdicts: Verdicts<'_>, write: bool) -> VerdictsOutcome {
    let mut outcome = VerdictsOutcome::default();
    let fresh = match parse_manifest(file, verdicts.manifest_json.as_bytes()) {
        Ok(fresh) => fresh,
        Err(error) => {
            outcome.unwritten.push(format!("failed to read the fresh manifest back: {error} (this is a bug)"));
            return outcome;
        }
    };
    let drift = if file.exists() {
        match read_manifest(file) {
            Ok(committed) => describe(&diff(&committed, &fresh)),
            // Whatever it is, it is not verdicts of this harness, and may
            // be somebody's: it is neither compared nor written over.
            Err(error) => {
                outcome.unreadable.push(format!("failed to read the committed verdicts: {error}"));
                return outcome;
            }
        }
    } else {
        vec![format!("{}: no committed verdicts", file.display())]
    };
    if !write {
        outcome.drift = drift;
        return outcome;
    }
    if !drift.is_empty() {
        outcome.written = drift;
        for (path, text) in [(file.to_path_buf(), verdicts.manifest_json), (markdown_path(file), verdicts.markdown)] {
            if let Err(error) = write_if_changed(&path, text.as_bytes()) {
                outcome.unwritten.push(format!("failed to {error}"));
            }
        }
    }
    outcome
}

/// Each difference `diff` found, in words.
fn describe(compared: &Diff) -> Vec<String> {
    let mut drift: Vec<String> = compared.meaning.clone();
    drift.extend(compared.columns_added.iter().map(|column| format!("column {column} is new")));
    drift.extend(compared.columns_removed.iter().map(|column| format!("column {column} is gone")));
    for cell in &compared.cells {
        let status = |view: &Option<crate::compare::diff::CellView>| {
            view.as_ref().map_or_else(|| "absent".to_string(), |v| v.status.as_str().to_string())
        };
        let (before, after) = (status(&cell.before), status(&cell.after));
        let detail =
            if before == after { "its refusals or codes moved".to_string() } else { format!("{before} -> {after}") };
        drift.push(format!("{}/{}/{}: {detail}", cell.case, cell.condition, cell.column));
    }
    drift
}
