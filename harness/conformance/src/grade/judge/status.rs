//! Deciding a case status from graded attempts, the record, and (when the
//! row grades it) the turn's ending.

use super::attempt::{AttemptGrade, AttemptOutcome};
use super::facts::TurnFacts;
use super::finding::Finding;
use super::turn_values::{grade_values, TurnValue};
use super::CellStatus;
use crate::grade::completeness::Completeness;
use crate::input::case::TurnExpectation;
use crate::input::script::{AttackScript, MoveKind, TerminalKind};
use crate::run::record::events::{self, ESCALATION_ASKED};
use sharedos_model::execution::ExecutionStatus;
use sharedos_model::record::{EndedBy, ExecutionRecord};
use sharedos_port::escalation::ESCALATION_TOOL;

/// How the turn ended, against what its row requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnVerdict {
    /// The required ending.
    pub expected: TurnExpectation,
    /// The observed status.
    pub observed: ExecutionStatus,
    /// The observed terminal code.
    pub reason_code: Option<String>,
    /// Status matches, and the code too when one is required.
    pub met: bool,
    /// The runtime asked for the ending (always true unless the script ends
    /// by escalating).
    pub asked: bool,
    /// A `turn.started` event exists.
    pub runtime_started: bool,
    /// Who ended a failed turn.
    pub ended_by: Option<EndedBy>,
    /// Every other value the row states about the ending, graded.
    pub values: Vec<TurnValue>,
}

impl TurnVerdict {
    /// Reads the ending of `record` (and the turn's `facts`) against `expected`.
    #[must_use]
    pub fn read(
        script: &AttackScript,
        expected: &TurnExpectation,
        record: &ExecutionRecord,
        facts: &TurnFacts,
    ) -> TurnVerdict {
        let execution = &record.execution;
        let reason_code = execution.terminal_reason_code.clone();
        let code_met = expected.reason_code.is_none() || expected.reason_code == reason_code;
        TurnVerdict {
            expected: expected.clone(),
            observed: execution.status,
            met: execution.status == expected.status && code_met,
            asked: ending_asked(script, record),
            runtime_started: events::runtime_started(&execution.events),
            ended_by: execution.ended_by,
            reason_code,
            values: grade_values(expected, record, facts),
        }
    }

    /// The first stated value the turn does not show.
    #[must_use]
    pub fn first_missed_value(&self) -> Option<&TurnValue> {
        self.values.iter().find(|v| !v.met)
    }

    /// True when the envelope ended the turn with the very ending the row
    /// requires: attempts left unissued by that ending are unreachable.
    #[must_use]
    pub fn ended_as_expected_by_envelope(&self) -> bool {
        self.met && self.observed == ExecutionStatus::Failed && self.ended_by == Some(EndedBy::Envelope)
    }
}

/// Whether the runtime asked for its script's ending. Only an escalation can
/// go unasked: a call naming the affordance, an announcement, or the
/// runtime's `escalationAsked` claim each count. A crash is never treated
/// this way, since no trace tells "declined to crash" from "the throw was
/// swallowed". The runtime's own claim can only make grading stricter (a
/// pass still needs the envelope to record the escalation).
fn ending_asked(script: &AttackScript, record: &ExecutionRecord) -> bool {
    if script.terminal.as_ref().map(|t| t.kind) != Some(TerminalKind::Escalate) {
        return true;
    }
    let execution = &record.execution;
    execution.escalation_asked.is_some()
        || execution.operations.iter().any(|o| o.tool.as_deref() == Some(ESCALATION_TOOL))
        || events::announcements(&execution.events).any(|a| a.kind == ESCALATION_ASKED)
}

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
    first_with(attempts, true, AttemptGrade::Fail).map(|a| Finding::AttemptMissedExpectation {
        attempt_id: a.attempt_id.clone(),
        expected: a.expect.clone(),
        observed: a.observed,
        reason_code: a.reason_code.clone(),
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
