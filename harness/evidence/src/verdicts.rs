//! Committed verdicts of columns that have no golden files (`--verdicts
//! FILE`): a real-clock column's records carry wall time, so no two runs
//! are byte-identical, but its verdicts must be. `run` writes the manifest
//! to FILE (and its Markdown beside it) when a verdict moved or the file is
//! new, so an unchanged column leaves the file alone; `check` compares the
//! fresh verdicts with FILE through `diff`'s engine, and any moved cell,
//! rules or case set, or added or removed column, is drift.

use crate::compare::diff::{diff, CellView, Change, Diff};
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

/// Each difference `diff` found, in words. A repeated cell is named by
/// what its runs come to under the one rule the exit code applies
/// (`Outcome`): `diff` lists a flaky cell, or a pass rate that moved
/// without significance, as noise, and that is drift only when the
/// outcome moved (a committed flaky cell that is still flaky is the
/// failure the file accepts; one that now passes every run, or fails
/// every run, moved).
fn describe(compared: &Diff) -> Vec<String> {
    let mut drift: Vec<String> = compared.meaning.clone();
    drift.extend(compared.columns_added.iter().map(|column| format!("column {column} is new")));
    drift.extend(compared.columns_removed.iter().map(|column| format!("column {column} is gone")));
    for cell in &compared.cells {
        let outcome = |view: &Option<CellView>| view.as_ref().map(CellView::outcome);
        if cell.change == Change::Flaky && outcome(&cell.before) == outcome(&cell.after) {
            continue;
        }
        let (before, after) = (shown(cell.before.as_ref()), shown(cell.after.as_ref()));
        let detail =
            if before == after { "its refusals or codes moved".to_string() } else { format!("{before} -> {after}") };
        drift.push(format!("{}/{}/{}: {detail}", cell.case, cell.condition, cell.column));
    }
    drift
}

/// A cell's verdict in a drift line: its status, or for a repeated cell
/// its outcome and how many runs passed.
fn shown(view: Option<&CellView>) -> String {
    let Some(view) = view else { return "absent".to_string() };
    match view.runs {
        Some(runs) => format!("{} ({} of {} runs passed)", view.outcome(), runs.passes, runs.runs),
        None => view.status.as_str().to_string(),
    }
}
