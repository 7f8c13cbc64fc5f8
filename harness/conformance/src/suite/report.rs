//! Turning a matrix run into the manifest and its Markdown rendering.

use crate::suite::cell::{CellError, CellRun};
use crate::suite::matrix::{run_all, PlannedResult, RunSettings};
use sharedos_grading::identity::case_set::case_set_hash;
use sharedos_grading::identity::sets::{world_set_hash_with, WorldSetError};
use sharedos_grading::input::loader::Suite;
use sharedos_grading::output::manifest::{
    build_manifest, manifest_json, ColumnHeader, FamilyRow, Manifest, ManifestRow,
};
use sharedos_grading::output::markdown::render_markdown;
use sharedos_grading::plan::{locate, NotInSuite, PlannedCell, Selection};
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
    /// The world-set hash could not be computed.
    #[error(transparent)]
    WorldSet(#[from] WorldSetError),
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
    let mut rows: Vec<FamilyRow> = Vec::new();
    for (planned, result) in results {
        let cell = match result {
            None => planned.declared.clone(),
            Some(Ok(run)) => {
                let cell = run.cell.clone();
                runs.push(run);
                Some(cell)
            }
            Some(Err(source)) => return Err(ReportError::Cell { cell: planned.key.trial_name(), source }),
        };
        let Some(cell) = cell else { continue };
        let row = row_for(suite, &planned, &mut rows)
            .map_err(|source| ReportError::Cell { cell: planned.key.trial_name(), source })?;
        row.cells.push(cell);
    }
    let selected_columns = selection
        .columns(suite)
        .into_iter()
        .map(|c| ColumnHeader { id: c.id.to_string(), label: c.label.to_string() })
        .collect();
    let selected = suite.cases.iter().filter(|c| selection.keeps_case(c));
    let world_set = world_set_hash_with(selected, &hashed(&runs))?;
    let manifest = build_manifest(sharedos_grading::output::manifest::ManifestInput {
        case_set_hash,
        world_set_hash: world_set,
        columns: selected_columns,
        rows,
        evidence: runs.iter().map(|r| r.evidence.clone()).collect(),
    })?;
    // The two renderings are independent; they run side by side on the pool.
    let (manifest_json, markdown) = rayon::join(|| manifest_json(&manifest), || render_markdown(&manifest));
    Ok(Report { cells: runs, manifest, manifest_json: manifest_json?, markdown })
}

/// The world hashes the run cells computed, by (case, condition).
fn hashed(runs: &[CellRun]) -> BTreeMap<(&str, &str), &str> {
    runs.iter().map(|run| ((run.key.case.as_str(), run.key.condition.as_str()), run.world_hash.as_str())).collect()
}

/// The row a planned cell belongs to, created on first sight (cells arrive
/// grouped by case and condition, in order).
fn row_for<'r>(
    suite: &Suite,
    planned: &PlannedCell,
    rows: &'r mut Vec<FamilyRow>,
) -> Result<&'r mut ManifestRow, CellError> {
    let same = |r: &FamilyRow| r.row.case_id == planned.key.case && r.row.condition_id == planned.key.condition;
    if !rows.last().is_some_and(same) {
        let (case, condition, script) = locate(suite, &planned.key)?;
        rows.push(FamilyRow {
            family: case.family,
            row: ManifestRow {
                case_id: case.id.clone(),
                condition_id: condition.id.clone(),
                kind: script.kind,
                invariant: script.invariant.clone(),
                expected_outcome: script.expected_outcome.clone(),
                condition: condition.description.clone(),
                turn_expectation: condition.expect_turn.clone(),
                cells: Vec::new(),
            },
        });
    }
    rows.last_mut().map(|r| &mut r.row).ok_or_else(|| NotInSuite { cell: planned.key.trial_name() }.into())
}
