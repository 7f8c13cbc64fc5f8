//! Turning a matrix run into the manifest and its Markdown rendering.

use crate::suite::cell::{CellError, CellRun};
use crate::suite::matrix::{run_all, PlannedResult, RunSettings};
use sharedos_conformance_metadata::repeats::Repeats;
use sharedos_grading::assemble::{assemble, AssembleError, Assembly};
use sharedos_grading::grade::judge::cell::Cell;
use sharedos_grading::identity::case_set::case_set_hash;
use sharedos_grading::input::loader::Suite;
use sharedos_grading::output::manifest::{manifest_json, Manifest};
use sharedos_grading::output::markdown::render_markdown;
use sharedos_grading::plan::{PlannedCell, Selection};
use sharedos_model::canonical::CanonicalError;
use std::collections::BTreeMap;

/// A finished run: every graded cell and the reports built from them.
#[derive(Debug, Clone)]
pub struct Report {
    /// Run cells in canonical order.
    pub cells: Vec<CellRun>,
    /// The manifest.
    pub manifest: Manifest,
    /// The manifest as committed (`reports/conformance.json`).
    pub manifest_json: String,
    /// Its Markdown rendering (`reports/conformance.md`).
    pub markdown: String,
}

impl Report {
    /// The manifest and its Markdown as committed verdicts (`--verdicts`):
    /// without the evidence root, which a real-clock column's records move
    /// at every run, so that the verdict files stay byte-identical from run
    /// to run while no verdict moves.
    ///
    /// # Errors
    /// When the manifest has no canonical form (it has).
    pub fn verdicts_files(&self) -> Result<(String, String), CanonicalError> {
        let mut verdicts = self.manifest.clone();
        verdicts.evidence_root = None;
        Ok((manifest_json(&verdicts)?, render_markdown(&verdicts)))
    }
}

/// Why a report could not be built (a harness bug, never a verdict).
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A cell could not be run.
    #[error("run cell {cell}: {source}")]
    Cell {
        /// `case/condition/column`.
        cell: String,
        /// Why.
        #[source]
        source: CellError,
    },
    /// The manifest could not be assembled.
    #[error(transparent)]
    Assemble(#[from] AssembleError),
    /// A hash could not be computed.
    #[error(transparent)]
    Hash(#[from] CanonicalError),
}

/// Runs the planned cells as `settings` say (see [`run_all`]) and builds
/// their report. The case-set hash needs only the suite, so it is computed
/// while the cells run rather than after them.
///
/// # Errors
/// As [`build_report`].
pub fn run_and_report(
    suite: &Suite,
    selection: &Selection,
    planned: &[PlannedCell],
    settings: RunSettings<'_>,
) -> Result<Report, ReportError> {
    let (results, case_set) = rayon::join(|| run_all(suite, planned, settings), || case_set_hash(suite));
    report_with(suite, selection, results, case_set?)
}

/// Builds the manifest and Markdown from the results of [`run_all`].
///
/// # Errors
/// When a cell could not be run or a hash not computed.
pub fn build_report(suite: &Suite, selection: &Selection, results: Vec<PlannedResult>) -> Result<Report, ReportError> {
    report_with(suite, selection, results, case_set_hash(suite)?)
}

/// [`build_report`], given the suite's case-set hash.
fn report_with(
    suite: &Suite,
    selection: &Selection,
    results: Vec<PlannedResult>,
    case_set_hash: String,
) -> Result<Report, ReportError> {
    let mut runs = Vec::with_capacity(results.len());
    let mut cells = Vec::with_capacity(results.len());
    for (planned, result) in results {
        match result {
            None => cells.extend(planned.declared.map(|cell| (planned.key, cell))),
            Some(Ok(run)) => {
                cells.push((planned.key, with_repeats(&run)));
                runs.push(run);
            }
            Some(Err(source)) => return Err(ReportError::Cell { cell: planned.key.trial_name(), source }),
        }
    }
    let manifest = assemble(Assembly {
        suite,
        selection,
        case_set_hash,
        cells,
        evidence: runs.iter().flat_map(CellRun::runs).map(|(_, evidence, _)| evidence.clone()).collect(),
        world_hashes: hashed(&runs),
    })?;
    // The two renderings are independent; they run side by side on the pool.
    let (manifest_json, markdown) = rayon::join(|| manifest_json(&manifest), || render_markdown(&manifest));
    Ok(Report { cells: runs, manifest, manifest_json: manifest_json?, markdown })
}

/// The manifest's cell of a run: the first run's, with every run's
/// verdict when it was repeated.
fn with_repeats(run: &CellRun) -> Cell {
    let statuses = run.runs().map(|(cell, _, _)| cell.status).collect();
    Cell { repeats: Repeats::of_runs(statuses), ..run.cell.clone() }
}

/// The world hashes the run cells computed, by (case, condition).
fn hashed(runs: &[CellRun]) -> BTreeMap<(&str, &str), &str> {
    runs.iter().map(|run| ((run.key.case.as_str(), run.key.condition.as_str()), run.world_hash.as_str())).collect()
}
