//! One line of a bundle's `evidence.jsonl`: a run cell's verdict, its
//! records' hashes, and what it was graded from.
//!
//! What a cell was graded from is the harness's own (`G`): the harness
//! reads it as its grading evidence and grades the cell again; a tool that
//! wants the verdicts and hashes only reads it as a JSON value, the
//! default:
//!
//! ```
//! use sharedos_conformance_metadata::evidence_line::EvidenceLine;
//!
//! let line = r#"{"case":"bounded-grant","condition":"baseline","column":"process:mine",
//!   "cell":{"columnId":"process:mine","status":"pass","refusedBy":["kernel"],
//!   "reasonCodes":["grant_exhausted"],"causes":[],"declared":1,"attempted":1,
//!   "driverIssued":[],"notApplicable":0,"recordUsable":true,"recordGaps":[],"turns":1},
//!   "recordHashes":["ab12"],"grading":{"records":[]}}"#;
//! let line: EvidenceLine = serde_json::from_str(line).unwrap();
//! assert_eq!(line.key().trial_name(), "bounded-grant/baseline/process:mine");
//! assert!(!line.cell.status.breaks_build());
//! ```

use crate::cell::Cell;
use crate::cell_key::CellKey;
use serde::{Deserialize, Serialize};

/// One run cell's evidence: what it was graded from, and the verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EvidenceLine<G = serde_json::Value> {
    /// The case.
    pub case: String,
    /// The condition.
    pub condition: String,
    /// The column.
    pub column: String,
    /// The graded cell, as the manifest holds it.
    pub cell: Cell,
    /// Each record's hash, in turn order (the evidence root's leaves).
    pub record_hashes: Vec<String>,
    /// What it was graded from.
    pub grading: G,
    /// Which run of a repeated cell, from 2 (`--repeat`); the first run's
    /// line has none, as every line of a run without repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
}

impl<G> EvidenceLine<G> {
    /// The cell it is the evidence of.
    #[must_use]
    pub fn key(&self) -> CellKey {
        CellKey { case: self.case.clone(), condition: self.condition.clone(), column: self.column.clone() }
    }
}
