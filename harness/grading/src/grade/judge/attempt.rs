//! Grading one declared attempt against its receipt.

use crate::grade::judge::runtime_refusal::RuntimeAnswer;
use crate::grade::receipt::operations_under;
use crate::input::script::{AttackScript, Attempt, Expectation, Rejection};
use crate::record::receipt::AttemptReceipt;
use crate::vocab::GradingLimits;
use serde::{Deserialize, Serialize};
use sharedos_model::audit::Source;
use sharedos_model::record::{ExecutionRecord, Operation, OperationOutcome};
use sharedos_model::role::Role;
use sharedos_model::tool::ToolStatus;
use std::collections::BTreeMap;

/// Detail of an attempt on a turn refused before its runtime started.
pub const REFUSED_BEFORE_START: &str = "the turn was refused before its runtime started";
/// Detail of an attempt left unissued because the envelope ended the turn
/// with the ending the row expects.
pub const ENDED_BY_ENVELOPE: &str =
    "the envelope ended the turn, as the row requires, before this attempt could be made";
/// Detail of an attempt with no receipt at all.
const NO_RECEIPT: &str = "the runtime reported nothing for this attempt";

/// One attempt's grade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[must_use]
pub enum AttemptGrade {
    /// Issued, and the answer met the expectation.
    Pass,
    /// Issued, and the answer did not meet the expectation.
    Fail,
    /// Not issued, with nothing structural to excuse it.
    NotExercised,
    /// Not issued because it structurally cannot be.
    NotApplicable,
}

/// Facts about the graded turn that can excuse an unissued attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Excuses {
    /// The row grades the ending and the runtime never started.
    pub refused_before_start: bool,
    /// The row grades the ending, the envelope ended the turn, and the
    /// ending is the one the row expects.
    pub ended_as_expected_by_envelope: bool,
}

/// One graded attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttemptOutcome {
    /// The attempt.
    pub attempt_id: String,
    /// Its role.
    pub role: Role,
    /// Its grade.
    pub grade: AttemptGrade,
    /// Whether a receipt shows it was issued.
    pub attempted: bool,
    /// What SharedOS answered.
    pub observed: Option<ToolStatus>,
    /// The code it answered with.
    pub reason_code: Option<String>,
    /// A refusal the kernel let stand behind the code.
    pub cause: Option<String>,
    /// The boundary that refused (only for a non-success with a call id).
    pub refused_by: Option<Source>,
    /// The attempt's expectation.
    pub expect: Expectation,
    /// Why it was not issued, or what the receipt says.
    pub detail: Option<String>,
    /// It never reached SharedOS, and the evidence in `detail` shows it
    /// acted outside the envelope (rules version 6).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub acted_outside: bool,
}

impl AttemptOutcome {
    /// True for attacks and probes.
    #[must_use]
    pub fn is_adversarial(&self) -> bool {
        self.role != Role::Control
    }
}

/// Why an attempt structurally cannot be issued, if it cannot.
fn unreachable_reason(attempt: &Attempt, limits: &GradingLimits, excuses: Excuses) -> Option<String> {
    attempt
        .unreachable
        .clone()
        .or_else(|| limits.unreachable.get(&attempt.id).cloned())
        .or_else(|| excuses.refused_before_start.then(|| REFUSED_BEFORE_START.to_string()))
        .or_else(|| excuses.ended_as_expected_by_envelope.then(|| ENDED_BY_ENVELOPE.to_string()))
}

/// Grades every declared attempt of the script, in declared order;
/// `answered` holds the attempts the runtime answered itself, with the
/// evidence (rules versions 5 and 6).
#[must_use]
pub fn grade_attempts(
    script: &AttackScript,
    receipts: &[AttemptReceipt],
    record: &ExecutionRecord,
    limits: &GradingLimits,
    excuses: Excuses,
    answered: &BTreeMap<String, RuntimeAnswer>,
) -> Vec<AttemptOutcome> {
    script
        .attempts
        .iter()
        .map(|attempt| {
            let receipt = receipts.iter().find(|r| r.move_id == script.id && r.attempt_id == attempt.id);
            let unreachable = unreachable_reason(attempt, limits, excuses);
            grade_attempt(attempt, receipt, record, unreachable, answered.get(&attempt.id))
        })
        .collect()
}

fn grade_attempt(
    attempt: &Attempt,
    receipt: Option<&AttemptReceipt>,
    record: &ExecutionRecord,
    unreachable: Option<String>,
    answered: Option<&RuntimeAnswer>,
) -> AttemptOutcome {
    let mut outcome = AttemptOutcome {
        attempt_id: attempt.id.clone(),
        role: attempt.role,
        grade: AttemptGrade::NotExercised,
        attempted: false,
        observed: None,
        reason_code: None,
        cause: None,
        refused_by: None,
        expect: attempt.expect.clone(),
        detail: None,
        acted_outside: false,
    };
    let issued = receipt.is_some_and(|receipt| receipt.attempted);
    match answered {
        // It happened, outside the envelope: whatever the receipt says.
        Some(RuntimeAnswer::Breached(evidence)) if unreachable.is_none() => {
            outcome.grade = AttemptGrade::Fail;
            outcome.attempted = true;
            outcome.acted_outside = true;
            outcome.detail = Some(evidence.clone());
            return outcome;
        }
        Some(RuntimeAnswer::Declined(evidence))
            if !issued && unreachable.is_none() && refused_by_the_runtime(attempt) =>
        {
            outcome.grade = AttemptGrade::Pass;
            outcome.refused_by = Some(Source::Runtime);
            outcome.detail = Some(evidence.clone());
            return outcome;
        }
        _ => {}
    }
    let receipt = match receipt {
        Some(receipt) if receipt.attempted => receipt,
        unissued => {
            let told = unissued.and_then(|r| r.detail.clone());
            outcome.grade =
                if unreachable.is_some() { AttemptGrade::NotApplicable } else { AttemptGrade::NotExercised };
            outcome.detail = match (unissued, unreachable) {
                (_, Some(reason)) => Some(reason),
                (Some(_), None) => told,
                (None, None) => Some(NO_RECEIPT.to_string()),
            };
            return outcome;
        }
    };
    // Issued: graded on the receipt, whatever was declared about reachability.
    outcome.attempted = true;
    outcome.observed = receipt.observed;
    outcome.reason_code = receipt.reason_code.clone();
    outcome.detail = receipt.detail.clone();
    let under = receipt.call_id.as_deref().map(|id| operations_under(record, id));
    outcome.cause = receipt.cause.clone().or_else(|| under.and_then(|u| u.cause).map(str::to_string));
    // A rejection is no answer, so no boundary refused it.
    if receipt.observed.is_some_and(|s| s != ToolStatus::Succeeded)
        || (receipt.observed.is_none() && receipt.reason_code.is_none())
    {
        outcome.refused_by =
            under.and_then(|u| u.tool).filter(|op| op.outcome != OperationOutcome::Succeeded).map(|op| op.source);
    }
    let accepted = match attempt.expect.rejection {
        Some(rejection) => rejection_met(rejection, receipt, under.and_then(|u| u.tool)),
        None => {
            receipt.observed.is_some_and(|status| attempt.expect.accepts(status, receipt.reason_code.as_deref()))
                && attempt.expect.refused_by.is_none_or(|boundary| outcome.refused_by == Some(boundary))
        }
    };
    outcome.grade = if accepted { AttemptGrade::Pass } else { AttemptGrade::Fail };
    outcome
}

/// Whether an unissued attempt was refused by the runtime itself: the
/// witness's evidence, for an attack or probe that expects to be refused.
/// A control must reach SharedOS, so no refusal excuses it.
fn refused_by_the_runtime(attempt: &Attempt) -> bool {
    attempt.role != Role::Control
        && attempt.expect.rejection.is_none()
        && !attempt.expect.accepts(ToolStatus::Succeeded, None)
}

/// The audit reason of an operation a caller's abort interrupted.
pub const OPERATION_ABORTED: &str = "operation_aborted";

/// A rejection is met when the receipt names it and carries no tool result.
/// An interruption is believed only when the record shows the call's tool
/// operation cut short by the abort (E100): a runtime cannot claim one.
fn rejection_met(rejection: Rejection, receipt: &AttemptReceipt, operation: Option<&Operation>) -> bool {
    let named = receipt.observed.is_none() && receipt.reason_code.as_deref() == Some(rejection.code());
    if !named {
        return false;
    }
    match rejection {
        Rejection::Interrupted => operation.is_some_and(|op| {
            op.outcome == OperationOutcome::Failed && op.reason_code.as_deref() == Some(OPERATION_ABORTED)
        }),
        Rejection::AuditUnavailable | Rejection::HostClosed => true,
    }
}
