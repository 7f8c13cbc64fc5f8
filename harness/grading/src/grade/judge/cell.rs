//! The manifest cell (defined in `sharedos-conformance-metadata`, which
//! other tools read), assembled from a judgement or declared for a row
//! that was never run.

use super::attempt::AttemptGrade;
use super::finding::Finding;
use super::Judgement;
use crate::grade::completeness::Completeness;
use crate::vocab::CellStatus;
pub use sharedos_conformance_metadata::cell::Cell;
use sharedos_model::audit::Source;
use sharedos_model::execution::ExecutionStatus;
use sharedos_model::record::EndedBy;
use std::collections::BTreeSet;

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
