//! Building the conformance manifest (its types are in
//! `sharedos-conformance-metadata`, which other tools read): columns with
//! their prompt-set hashes, rows grouped by family, the reason codes'
//! coverage, and the evidence root over every run cell's records.

use crate::grade::judge::cell::Cell;
use crate::identity::sets::{hash_evidence_root, hash_prompt_set, record_hash, EvidenceLeaf, PromptEntry};
use crate::identity::tags::HASH_SCHEME;
use crate::input::case::Family;
use crate::output::coverage::unreachable_reason;
use crate::vocab::{CellKey, ADOPTED_JUDGE_VERSION, RULES_VERSION};
use sharedos_conformance_metadata::column_runtime::ColumnRuntime;
pub use sharedos_conformance_metadata::manifest::{
    CodeCoverage, FamilyGroup, Manifest, ManifestColumn, ManifestRow, RowRef, MANIFEST_VERSION,
};
use sharedos_model::canonical::CanonicalError;
use sharedos_model::codes::ReasonCode;
use sharedos_model::record::ExecutionRecord;

/// One turn's contribution to the evidence: its record hash and the prompt
/// hash it stated, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnEvidence {
    /// 1-based turn number.
    pub turn: u32,
    /// The record's content hash.
    pub record_hash: String,
    /// The record's `system.promptHash`.
    pub prompt_hash: Option<String>,
}

/// Every record behind one run cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellEvidence {
    /// The case.
    pub case_id: String,
    /// The condition.
    pub condition_id: String,
    /// The column.
    pub column_id: String,
    /// Turns in order.
    pub turns: Vec<TurnEvidence>,
    /// Which run of a repeated cell, from 2; `None` for the first run.
    pub repeat: Option<u32>,
    /// The runtime its first record names; `None` when it has no record.
    pub runtime: Option<ColumnRuntime>,
}

/// Every code of the vocabulary, in declaration order, with the rows and
/// columns of `rows` whose cells show it.
#[must_use]
pub fn reason_code_coverage(columns: &[ManifestColumn], rows: &[ManifestRow]) -> Vec<CodeCoverage> {
    ReasonCode::ALL
        .iter()
        .map(|code| {
            let shows = |cell: &Cell| cell.reason_codes.iter().any(|c| c == code.as_str());
            CodeCoverage {
                code: code.as_str().to_string(),
                rows: rows.iter().filter(|row| row.cells.iter().any(shows)).map(ManifestRow::row_ref).collect(),
                columns: columns
                    .iter()
                    .filter(|column| {
                        rows.iter().flat_map(|row| &row.cells).any(|cell| cell.column_id == column.id && shows(cell))
                    })
                    .map(|column| column.id.clone())
                    .collect(),
                unreachable: unreachable_reason(*code).map(str::to_string),
            }
        })
        .collect()
}

/// A column as the runner knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnHeader {
    /// Column id.
    pub id: String,
    /// Display label.
    pub label: String,
}

/// A row with the family its case belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyRow {
    /// The family.
    pub family: Family,
    /// The row.
    pub row: ManifestRow,
}

/// Everything a manifest is built from.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestInput {
    /// Case-set hash.
    pub case_set_hash: String,
    /// World-set hash.
    pub world_set_hash: String,
    /// Columns, in order.
    pub columns: Vec<ColumnHeader>,
    /// Rows, in declared order.
    pub rows: Vec<FamilyRow>,
    /// Evidence of every run cell, in run order.
    pub evidence: Vec<CellEvidence>,
}

/// The record and prompt hashes of a cell's records, turn by turn.
///
/// # Errors
/// When a record has no canonical form (none does).
pub fn evidence_of(key: &CellKey, records: &[ExecutionRecord]) -> Result<CellEvidence, CanonicalError> {
    let mut turns = Vec::new();
    for (i, record) in records.iter().enumerate() {
        turns.push(TurnEvidence {
            turn: u32::try_from(i + 1).unwrap_or(u32::MAX),
            record_hash: record_hash(record)?,
            prompt_hash: record.system.prompt_hash.clone(),
        });
    }
    Ok(CellEvidence {
        case_id: key.case.clone(),
        condition_id: key.condition.clone(),
        column_id: key.column.clone(),
        turns,
        repeat: None,
        runtime: records.first().map(|record| ColumnRuntime::of(&record.system)),
    })
}

/// A column's prompt-set hash: over the ordered `{case, condition, turn,
/// promptHash}` of every turn of that column that stated a prompt hash;
/// `None` when no turn did. A repeated cell's later runs were told the
/// same, and are left out.
///
/// # Errors
/// When hashing fails (it cannot for these values).
pub fn prompt_set_hash(column_id: &str, evidence: &[CellEvidence]) -> Result<Option<String>, CanonicalError> {
    let entries: Vec<PromptEntry<'_>> = evidence
        .iter()
        .filter(|cell| cell.column_id == column_id && cell.repeat.is_none())
        .flat_map(|cell| {
            cell.turns.iter().filter_map(move |turn| {
                turn.prompt_hash.as_deref().map(|prompt_hash| PromptEntry {
                    case: &cell.case_id,
                    condition: &cell.condition_id,
                    turn: turn.turn,
                    prompt_hash,
                })
            })
        })
        .collect();
    hash_prompt_set(&entries)
}

/// The runtime a column's records name: its first run cell's, in run
/// order; `None` when no cell of it ran.
#[must_use]
pub fn column_runtime(column_id: &str, evidence: &[CellEvidence]) -> Option<ColumnRuntime> {
    evidence.iter().filter(|cell| cell.column_id == column_id).find_map(|cell| cell.runtime.clone())
}

/// The evidence root over every run cell's record hashes (see
/// [`hash_evidence_root`]).
///
/// # Errors
/// When hashing fails (it cannot for these values).
pub fn evidence_root(evidence: &[CellEvidence]) -> Result<String, CanonicalError> {
    let leaves = evidence
        .iter()
        .map(|cell| EvidenceLeaf {
            case: &cell.case_id,
            condition: &cell.condition_id,
            column: &cell.column_id,
            records: cell.turns.iter().map(|t| t.record_hash.as_str()).collect(),
            repeat: cell.repeat,
        })
        .collect();
    hash_evidence_root(leaves)
}

/// Builds the manifest: columns with their prompt-set hashes, rows grouped
/// by family, and the evidence root.
///
/// # Errors
/// When hashing fails (it cannot for these values).
pub fn build_manifest(input: ManifestInput) -> Result<Manifest, CanonicalError> {
    let mut columns = Vec::with_capacity(input.columns.len());
    for column in &input.columns {
        columns.push(ManifestColumn {
            id: column.id.clone(),
            label: column.label.clone(),
            prompt_set_hash: prompt_set_hash(&column.id, &input.evidence)?,
            runtime: column_runtime(&column.id, &input.evidence),
        });
    }
    let mut families: Vec<FamilyGroup> = Vec::new();
    for entry in &input.rows {
        let row_ref = entry.row.row_ref();
        match families.iter_mut().find(|g| g.family == entry.family) {
            Some(group) => group.rows.push(row_ref),
            None => families.push(FamilyGroup { family: entry.family, rows: vec![row_ref] }),
        }
    }
    // Families in their fixed report order (matrix first), rows in row order.
    families.sort_by_key(|g| g.family);
    let rows: Vec<ManifestRow> = input.rows.into_iter().map(|r| r.row).collect();
    Ok(Manifest {
        version: MANIFEST_VERSION.to_string(),
        judge_version: ADOPTED_JUDGE_VERSION.to_string(),
        rules_version: Some(RULES_VERSION.to_string()),
        hash_scheme: Some(HASH_SCHEME.to_string()),
        case_set_hash: input.case_set_hash,
        world_set_hash: input.world_set_hash,
        evidence_root: Some(evidence_root(&input.evidence)?),
        reason_codes: reason_code_coverage(&columns, &rows),
        columns,
        families,
        rows,
    })
}

/// The manifest as committed: 2-space indented JSON and one newline.
///
/// # Errors
/// When the manifest holds a value with no JSON form.
pub fn manifest_json(manifest: &Manifest) -> Result<String, CanonicalError> {
    let mut text = serde_json::to_string_pretty(manifest).map_err(|e| CanonicalError(e.to_string()))?;
    text.push('\n');
    Ok(text)
}

/// Every cell that fails a build (`fail` or `not_exercised`), with its row.
#[must_use]
pub fn strict_failures(manifest: &Manifest) -> Vec<(&ManifestRow, &Cell)> {
    manifest
        .rows
        .iter()
        .flat_map(|row| row.cells.iter().map(move |cell| (row, cell)))
        .filter(|(_, cell)| cell.status.breaks_build())
        .collect()
}
