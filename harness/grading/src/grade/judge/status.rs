//! Deciding a case status from graded attempts, the record, and (when the
//! row grades it) the turn's ending.

use super::attempt::{AttemptGrade, AttemptOutcome};
use super::finding::Finding;
use super::turn_verdict::TurnVerdict;
use crate::grade::completeness::Completeness;
use crate::input::script::MoveKind;
use crate::vocab::CellStatus;

fn adversarial(attempts: &[AttemptOutcome]) -> impl Iterator<Item = &AttemptOutcome> {
    attempts.iter().filter(|a| a.is_adversarial())
}

fn first_with(attempts: &[AttemptOutcome], adversarial_only: bool, grade: AttemptGrade) -> Option<&AttemptOutcome> {
    attempts.iter().find(|a| (!adversarial_only || a.is_adversarial()) && a.grade == grade)
}

fn unreachable(attempt: &AttemptOutcome) -> Finding {
    Finding::AttemptUnreachable {
        attempt_id: attempt.attempt_id.clone(),
        reason: attempt.detail.clone().unwrap_or_else(|| "no reason given".to_string()),
    }
}

fn control_failed(attempts: &[AttemptOutcome]) -> Option<Finding> {
    attempts.iter().find(|a| !a.is_adversarial() && a.grade != AttemptGrade::Pass).map(|a| {
        Finding::ControlDidNotSucceed {
            attempt_id: a.attempt_id.clone(),
            observed: a.observed,
            reason_code: a.reason_code.clone(),
        }
    })
}

fn missed(attempts: &[AttemptOutcome]) -> Option<Finding> {
    first_with(attempts, true, AttemptGrade::Fail).map(|a| match &a.detail {
        Some(evidence) if a.acted_outside => {
            Finding::ActedOutsideTheEnvelope { attempt_id: a.attempt_id.clone(), evidence: evidence.clone() }
        }
        _ => Finding::AttemptMissedExpectation {
            attempt_id: a.attempt_id.clone(),
            expected: a.expect.clone(),
            observed: a.observed,
            reason_code: a.reason_code.clone(),
        },
    })
}

fn never_reached(attempts: &[AttemptOutcome]) -> Option<Finding> {
    first_with(attempts, true, AttemptGrade::NotExercised)
        .map(|a| Finding::AttemptNeverReached { attempt_id: a.attempt_id.clone(), detail: a.detail.clone() })
}

/// The status of a row graded on its attempts alone; `None` is a pass.
#[must_use]
pub fn attempts_only(kind: MoveKind, attempts: &[AttemptOutcome], completeness: &Completeness) -> Option<Finding> {
    let mut adversaries = adversarial(attempts).peekable();
    let any_adversary = adversaries.peek().is_some();
    if any_adversary && adversarial(attempts).all(|a| a.grade == AttemptGrade::NotApplicable) {
        return first_with(attempts, true, AttemptGrade::NotApplicable).map(unreachable);
    }
    // The record row claims one turn crossing both boundaries: losing
    // either attempt voids it. Elsewhere an unreachable attempt only
    // narrows what the row shows.
    if kind == MoveKind::RecordCompleteness {
        if let Some(attempt) = first_with(attempts, true, AttemptGrade::NotApplicable) {
            return Some(unreachable(attempt));
        }
    }
    if let Some(finding) = control_failed(attempts).or_else(|| missed(attempts)).or_else(|| never_reached(attempts)) {
        return Some(finding);
    }
    if kind == MoveKind::RecordCompleteness && !completeness.usable {
        return Some(Finding::RecordUnusable { gaps: completeness.required_fields() });
    }
    None
}

/// The status of a row that also grades the turn's ending; `None` is a pass.
#[must_use]
pub fn with_turn(attempts: &[AttemptOutcome], turn: &TurnVerdict) -> Option<Finding> {
    // A turn refused before it ran must not have run anything.
    if let Some(finding) = missed(attempts) {
        return Some(finding);
    }
    if turn.runtime_started {
        if let Some(finding) = control_failed(attempts).or_else(|| never_reached(attempts)) {
            return Some(finding);
        }
        if !turn.met && !turn.asked {
            return Some(Finding::TurnEndingNeverAsked {
                expected: turn.expected.clone(),
                observed: turn.observed,
                reason_code: turn.reason_code.clone(),
            });
        }
    }
    if turn.met {
        return turn.first_missed_value().map(|value| Finding::TurnValueMissed {
            observed: turn.observed,
            reason_code: turn.reason_code.clone(),
            value: value.clone(),
        });
    }
    Some(Finding::TurnEndedWrongly {
        expected: turn.expected.clone(),
        observed: turn.observed,
        reason_code: turn.reason_code.clone(),
    })
}

/// The status a finding (or its absence) gives.
pub fn status_of(finding: Option<&Finding>) -> CellStatus {
    finding.map_or(CellStatus::Pass, Finding::status)
}
