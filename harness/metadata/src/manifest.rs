//! The conformance manifest: SharedOS's manifest shape plus this harness's
//! additions, with key order fixed by field order so the JSON is
//! byte-stable.
//!
//! Additions to SharedOS's shape: `rulesVersion` and `hashScheme` after
//! `judgeVersion`, `evidenceRoot` after `worldSetHash`, `families` and
//! `reasonCodes` before `rows`, and `turnExpectation` on a row that grades
//! the turn's ending.
//! Each addition is optional when read, so a SharedOS manifest (or one
//! written before `causes` existed) still parses and renders.

use crate::cell::Cell;
use crate::cell_key::CellKey;
use crate::column_runtime::ColumnRuntime;
use crate::family::Family;
use crate::move_kind::MoveKind;
use crate::turn_expectation::TurnExpectation;
use serde::{Deserialize, Serialize};

/// The manifest schema version.
pub const MANIFEST_VERSION: &str = "1";

/// The whole manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    /// Schema version ([`MANIFEST_VERSION`]).
    pub version: String,
    /// The SharedOS judge version whose semantics the rules adopt.
    pub judge_version: String,
    /// This harness's grading-rules version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules_version: Option<String>,
    /// How the hashes were computed (`sha256-tagged-jcs/v1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash_scheme: Option<String>,
    /// Hash of the cases and scripts, prose excluded.
    pub case_set_hash: String,
    /// Hash of the worlds every condition materialised.
    pub world_set_hash: String,
    /// Hash over every run cell's record hashes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_root: Option<String>,
    /// Columns, in order.
    pub columns: Vec<ManifestColumn>,
    /// Rows grouped by rule family, in the families' report order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub families: Vec<FamilyGroup>,
    /// Every reason code of the vocabulary: the rows and columns whose
    /// cells show it, or why none can.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reason_codes: Vec<CodeCoverage>,
    /// One row per (case, condition), in declared order.
    pub rows: Vec<ManifestRow>,
}

/// A column header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestColumn {
    /// Column id (`adversary-embedded`).
    pub id: String,
    /// Display label (`Adversary`).
    pub label: String,
    /// Hash of the prompts this column stated; absent when it stated none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_set_hash: Option<String>,
    /// The runtime its records name; absent in a manifest written before
    /// it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<ColumnRuntime>,
}

/// The rows of one rule family.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FamilyGroup {
    /// The family.
    pub family: Family,
    /// Its rows, in row order.
    pub rows: Vec<RowRef>,
}

/// A reference to a row.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RowRef {
    /// The case.
    pub case_id: String,
    /// The condition.
    pub condition_id: String,
}

/// One (case, condition) row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ManifestRow {
    /// The case.
    pub case_id: String,
    /// The condition.
    pub condition_id: String,
    /// The move kind.
    pub kind: MoveKind,
    /// The invariant the row attacks.
    pub invariant: String,
    /// What SharedOS should do.
    pub expected_outcome: String,
    /// The condition's prose description.
    pub condition: String,
    /// The ending the row grades, when it grades one (as the case declares it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_expectation: Option<TurnExpectation>,
    /// One cell per column, in column order.
    pub cells: Vec<Cell>,
}

impl ManifestRow {
    /// The key of one of this row's cells.
    #[must_use]
    pub fn key_of(&self, cell: &Cell) -> CellKey {
        CellKey { case: self.case_id.clone(), condition: self.condition_id.clone(), column: cell.column_id.clone() }
    }

    /// This row's reference.
    #[must_use]
    pub fn row_ref(&self) -> RowRef {
        RowRef { case_id: self.case_id.clone(), condition_id: self.condition_id.clone() }
    }
}

/// One code of the vocabulary: where it was seen, or why it cannot be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CodeCoverage {
    /// The code.
    pub code: String,
    /// The rows with a cell that shows it, in row order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<RowRef>,
    /// The columns with a cell that shows it, in column order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub columns: Vec<String>,
    /// Why no row can produce it, when it is declared so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreachable: Option<String>,
}
