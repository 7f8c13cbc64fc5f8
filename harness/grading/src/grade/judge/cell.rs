//! The manifest cell: its fields and wire shape, assembled from a judgement
//! or declared for a row that was never run.

use super::attempt::AttemptGrade;
use super::finding::Finding;
use super::Judgement;
use crate::grade::completeness::Completeness;
use crate::grade::repeats::Repeats;
use crate::vocab::CellStatus;
use serde::{Deserialize, Serialize, Serializer};
use sharedos_model::audit::Source;
use sharedos_model::execution::ExecutionStatus;
use sharedos_model::record::EndedBy;
use std::collections::BTreeSet;

/// One graded (or declared) cell.
///
/// Serialised in one of two key orders, as SharedOS writes them: a run cell
/// (`turns > 0`) puts `driverIssued` after `attempted`; a cell decided
/// without running puts it after `recordGaps`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[must_use]
pub struct Cell {
    /// The column.
    pub column_id: String,
    /// The verdict.
    pub status: CellStatus,
    /// Boundaries that refused, sorted by spelling.
    pub refused_by: Vec<Source>,
    /// Codes observed, sorted and unique.
    pub reason_codes: Vec<String>,
    /// Refusals the kernel let stand rather than made; reported, not graded.
    #[serde(default)]
    pub causes: Vec<String>,
    /// Attempts the script declares.
    pub declared: u32,
    /// Attempts actually issued.
    pub attempted: u32,
    /// Driver-issued attempts actually issued, in declared order.
    pub driver_issued: Vec<String>,
    /// Attempts graded not applicable.
    pub not_applicable: u32,
    /// Whether the last turn's record is usable.
    pub record_usable: bool,
    /// Required gaps of the last turn's record.
    pub record_gaps: Vec<String>,
    /// Turns run (0 when decided without running).
    pub turns: u32,
    /// Why, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Every run's verdict when the cell ran more than once (`--repeat`);
    /// the fields above are the first run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
}

impl Cell {
    /// True when the cell was decided without running a turn.
    #[must_use]
    pub fn is_declared(&self) -> bool {
        self.turns == 0
    }

    /// How the cell is shown: its status label, or `pass (driver)` when the
    /// attacking call was issued by the column's driver.
    #[must_use]
    pub fn label(&self) -> String {
        let label = self.status.label();
        if self.status == CellStatus::Pass && !self.driver_issued.is_empty() {
            format!("{label} (driver)")
        } else {
            label.to_string()
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunCellWire<'a> {
    column_id: &'a str,
    status: CellStatus,
    refused_by: &'a [Source],
    reason_codes: &'a [String],
    causes: &'a [String],
    declared: u32,
    attempted: u32,
    driver_issued: &'a [String],
    not_applicable: u32,
    record_usable: bool,
    record_gaps: &'a [String],
    turns: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repeats: Option<&'a Repeats>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DeclaredCellWire<'a> {
    column_id: &'a str,
    status: CellStatus,
    refused_by: &'a [Source],
    reason_codes: &'a [String],
    causes: &'a [String],
    declared: u32,
    attempted: u32,
    not_applicable: u32,
    record_usable: bool,
    record_gaps: &'a [String],
    driver_issued: &'a [String],
    turns: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repeats: Option<&'a Repeats>,
}

impl Serialize for Cell {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.is_declared() {
            DeclaredCellWire {
                column_id: &self.column_id,
                status: self.status,
                refused_by: &self.refused_by,
                reason_codes: &self.reason_codes,
                causes: &self.causes,
                declared: self.declared,
                attempted: self.attempted,
                not_applicable: self.not_applicable,
                record_usable: self.record_usable,
                record_gaps: &self.record_gaps,
                driver_issued: &self.driver_issued,
                turns: self.turns,
                detail: self.detail.as_deref(),
                repeats: self.repeats.as_ref(),
            }
            .serialize(serializer)
        } else {
            RunCellWire {
                column_id: &self.column_id,
                status: self.status,
                refused_by: &self.refused_by,
                reason_codes: &self.reason_codes,
                causes: &self.causes,
                declared: self.declared,
                attempted: self.attempted,
                driver_issued: &self.driver_issued,
                not_applicable: self.not_applicable,
                record_usable: self.record_usable,
                record_gaps: &self.record_gaps,
                turns: self.turns,
                detail: self.detail.as_deref(),
                repeats: self.repeats.as_ref(),
            }
            .serialize(serializer)
        }
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The boundary a met ending credits: the kernel for a denied turn, the
/// envelope for a failed turn it ended. An escalation credits nobody: the
/// runtime chose that ending.
fn ending_credit(judgement: &Judgement) -> Option<Source> {
    let turn = judgement.turn.as_ref().filter(|t| t.met)?;
    match turn.observed {
        ExecutionStatus::Denied => Some(Source::Kernel),
        ExecutionStatus::Failed if turn.ended_by == Some(EndedBy::Envelope) => Some(Source::Envelope),
        _ => None,
    }
}

/// The cell of a run: counts and codes from the graded attempts, record
/// usability from the last turn's record. A column that declares the row out
/// of scope keeps all of it but takes `out_of_scope` and its reason as the
/// verdict.
pub fn assemble_cell(
    column_id: &str,
    judgement: &Judgement,
    completeness: &Completeness,
    turns: u32,
    out_of_scope: Option<&str>,
) -> Cell {
    let attempts = &judgement.attempts;
    let mut codes: BTreeSet<String> = attempts.iter().filter_map(|a| a.reason_code.clone()).collect();
    if let Some(code) = judgement.turn.as_ref().and_then(|t| t.reason_code.clone()) {
        codes.insert(code);
    }
    let causes: BTreeSet<String> = attempts.iter().filter_map(|a| a.cause.clone()).collect();
    let mut refused_by: Vec<Source> =
        attempts.iter().filter_map(|a| a.refused_by).chain(ending_credit(judgement)).collect();
    refused_by.sort_by_key(|s| s.as_str());
    refused_by.dedup();
    let (status, detail) = match out_of_scope {
        Some(reason) => {
            let finding = Finding::OutOfScope { reason: reason.to_string() };
            (finding.status(), Some(finding.detail()))
        }
        None => (judgement.status, judgement.detail()),
    };
    Cell {
        column_id: column_id.to_string(),
        status,
        refused_by,
        reason_codes: codes.into_iter().collect(),
        causes: causes.into_iter().collect(),
        declared: count(attempts.len()),
        attempted: count(attempts.iter().filter(|a| a.attempted).count()),
        driver_issued: judgement.driver_issued.clone(),
        not_applicable: count(attempts.iter().filter(|a| a.grade == AttemptGrade::NotApplicable).count()),
        record_usable: completeness.usable,
        record_gaps: completeness.required_fields(),
        // A run always ran at least one turn; zero would read as "declared".
        turns: turns.max(1),
        detail,
        repeats: None,
    }
}

/// The cell of a row decided without running: `not_implemented` (SharedOS
/// lacks the feature) or `not_applicable` (the column cannot run the row).
/// The reason is always carried: a declared cell without one is
/// indistinguishable from a row nobody ran.
pub fn declared_cell(column_id: &str, status: CellStatus, declared: u32, reason: &str) -> Cell {
    Cell {
        column_id: column_id.to_string(),
        status,
        refused_by: Vec::new(),
        reason_codes: Vec::new(),
        causes: Vec::new(),
        declared,
        attempted: 0,
        driver_issued: Vec::new(),
        not_applicable: if status == CellStatus::NotApplicable { declared } else { 0 },
        record_usable: false,
        record_gaps: Vec::new(),
        turns: 0,
        detail: Some(reason.to_string()),
        repeats: None,
    }
}
