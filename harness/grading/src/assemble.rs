//! A manifest assembled from graded cells: rows in plan order with each
//! row's case facts, the hashes over the run cells' evidence, and the
//! world set. A run assembles the cells it graded; `merge` assembles the
//! cells of its shards' bundles, through this same path, so a merged
//! manifest is the unsharded one byte for byte.

use crate::grade::judge::cell::Cell;
use crate::identity::sets::{world_set_hash_with, WorldSetError};
use crate::input::loader::Suite;
use crate::output::manifest::{
    build_manifest, CellEvidence, ColumnHeader, FamilyRow, Manifest, ManifestInput, ManifestRow,
};
use crate::plan::{locate, NotInSuite, Selection};
use crate::vocab::CellKey;
use sharedos_model::canonical::CanonicalError;
use std::collections::BTreeMap;

/// Everything a manifest is assembled from.
#[derive(Debug)]
pub struct Assembly<'a> {
    /// The suite the cells were planned from.
    pub suite: &'a Suite,
    /// The selection they were planned for (its shard, if any, is ignored:
    /// the world set always covers every selected case).
    pub selection: &'a Selection,
    /// The suite's case-set hash.
    pub case_set_hash: String,
    /// Every cell, run or declared, in plan order.
    pub cells: Vec<(CellKey, Cell)>,
    /// Every run cell's evidence, in plan order.
    pub evidence: Vec<CellEvidence>,
    /// The world hash each run row computed, by (case, condition); a row
    /// not run has its world built again.
    pub world_hashes: BTreeMap<(&'a str, &'a str), &'a str>,
}

/// Why a manifest could not be assembled.
#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    /// A cell names a case or condition the suite lacks.
    #[error(transparent)]
    NotInSuite(#[from] NotInSuite),
    /// The world-set hash could not be computed.
    #[error(transparent)]
    WorldSet(#[from] WorldSetError),
    /// A hash could not be computed.
    #[error(transparent)]
    Hash(#[from] CanonicalError),
}

/// Assembles the manifest.
///
/// # Errors
/// See [`AssembleError`].
pub fn assemble(assembly: Assembly<'_>) -> Result<Manifest, AssembleError> {
    let Assembly { suite, selection, case_set_hash, cells, evidence, world_hashes } = assembly;
    let mut rows: Vec<FamilyRow> = Vec::new();
    for (key, cell) in cells {
        row_for(suite, &key, &mut rows)?.cells.push(cell);
    }
    let columns = selection
        .columns(suite)
        .into_iter()
        .map(|c| ColumnHeader { id: c.id.to_string(), label: c.label.to_string() })
        .collect();
    let selected = suite.cases.iter().filter(|c| selection.keeps_case(c));
    let world_set_hash = world_set_hash_with(selected, &world_hashes)?;
    Ok(build_manifest(ManifestInput { case_set_hash, world_set_hash, columns, rows, evidence })?)
}

/// The row a cell belongs to, created on first sight (cells arrive
/// grouped by case and condition, in order).
fn row_for<'r>(suite: &Suite, key: &CellKey, rows: &'r mut Vec<FamilyRow>) -> Result<&'r mut ManifestRow, NotInSuite> {
    let same = |r: &FamilyRow| r.row.case_id == key.case && r.row.condition_id == key.condition;
    if !rows.last().is_some_and(same) {
        let (case, condition, script) = locate(suite, key)?;
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
    rows.last_mut().map(|r| &mut r.row).ok_or_else(|| NotInSuite { cell: key.trial_name() })
}
