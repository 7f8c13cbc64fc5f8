//! Turning what happened into an ending: the runtime's outcome (E30–E41),
//! the catch path (E33, E49, E65), and the `turn.ended` record (E96–E98).

use crate::error::TurnError;
use crate::events::{failed_data, EventKind};
use crate::kernel_call::Thrown;
use crate::options::{TurnErrorContext, TurnErrorHook};
use crate::turn::Turn;
use serde_json::{json, Map, Value};
use sharedos_model::audit::Source;
use sharedos_model::codes::ReasonCode;
use sharedos_model::execution::{Escalation, ExecutionResult, ExecutionStatus, RuntimeTurnOutcome};
use sharedos_model::tool::ProtocolError;
use sharedos_model::validate::{drop_proto_keys, Validate};
use sharedos_port::error::KernelError;
use sharedos_port::escalation::ESCALATION_TOOL;
use sharedos_port::turn_kernel::TurnEnd;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// How a turn body ended, before it is dressed as an `ExecutionResult`.
#[derive(Debug, Clone)]
pub(crate) struct Ending {
    pub(crate) status: ExecutionStatus,
    pub(crate) output: Option<Value>,
    pub(crate) error: Option<ProtocolError>,
    pub(crate) escalation: Option<Escalation>,
    /// The parsed outcome's own metadata, on the endings that keep it.
    pub(crate) outcome_metadata: Option<Map<String, Value>>,
}

impl Ending {
    pub(crate) fn with_error(status: ExecutionStatus, error: ProtocolError) -> Ending {
        Ending { status, output: None, error: Some(error), escalation: None, outcome_metadata: None }
    }
}

/// Error codes and messages the envelope writes itself.
pub(crate) fn envelope_error(code: ReasonCode, retryable: Option<bool>) -> ProtocolError {
    let message = match code {
        ReasonCode::TurnCancelled => "The turn was cancelled before the runtime finished.",
        ReasonCode::AuditUnavailable => "The turn stopped because a pre-effect audit record could not be written.",
        ReasonCode::RuntimeFailed => "The runtime failed while running the turn.",
        ReasonCode::InvalidRuntimeOutcome => "The runtime returned an outcome that does not match the contract.",
        ReasonCode::ToolUnavailable => "Escalation is not available in this permission-filtered turn.",
        ReasonCode::ActorMismatch => "The context's actor is not the executing agent.",
        ReasonCode::ReceiverMismatch => "The message's receiver is not the executing agent.",
        ReasonCode::MessageContextMismatch => "The message's trace or purpose differs from the context.",
        _ => "The turn's authority does not grant permission to invoke this agent.",
    };
    ProtocolError { code: code.as_str().to_string(), message: message.to_string(), retryable, details: None }
}

/// Checks a candidate outcome the runtime returned and ends the turn with it
/// (E30–E32, E37–E41).
pub(crate) async fn handle_candidate(turn: &std::rc::Rc<Turn>, mut candidate: Value) -> Result<Ending, Thrown> {
    drop_proto_keys(&mut candidate);
    let parsed = serde_json::from_value::<RuntimeTurnOutcome>(candidate).ok().filter(|o| o.validate().is_ok());
    let Some(outcome) = parsed else {
        let code = ReasonCode::InvalidRuntimeOutcome;
        turn.events.emit(EventKind::TurnFailed, failed_data(code.as_str(), "envelope"));
        return Ok(Ending::with_error(ExecutionStatus::Failed, envelope_error(code, None)));
    };
    match outcome {
        RuntimeTurnOutcome::Complete { output, metadata } => {
            turn.events.emit(EventKind::TurnCompleted, json!({}));
            Ok(Ending {
                status: ExecutionStatus::Succeeded,
                output: Some(output),
                error: None,
                escalation: None,
                outcome_metadata: metadata,
            })
        }
        RuntimeTurnOutcome::Fail { mut error, metadata } => {
            turn.events.emit(EventKind::TurnFailed, failed_data(&error.code, "runtime"));
            if error.retryable == Some(true) && !turn.ledger.safe_to_retry() {
                error.retryable = Some(false);
            }
            let mut ending = Ending::with_error(ExecutionStatus::Failed, error);
            ending.outcome_metadata = metadata;
            Ok(ending)
        }
        RuntimeTurnOutcome::Escalate { reason, metadata } => escalate(turn, reason, metadata).await,
    }
}

async fn escalate(
    turn: &std::rc::Rc<Turn>,
    reason: String,
    metadata: Option<Map<String, Value>>,
) -> Result<Ending, Thrown> {
    if !turn.catalogue.borrow().offers(ESCALATION_TOOL) {
        let code = ReasonCode::ToolUnavailable;
        turn.events.emit(EventKind::TurnFailed, failed_data(code.as_str(), "envelope"));
        let mut ending = Ending::with_error(ExecutionStatus::Failed, envelope_error(code, None));
        ending.outcome_metadata = metadata;
        return Ok(ending);
    }
    let kernel = turn.kernel.clone();
    let context = turn.context_now();
    let hard = turn.deadlines.hard().clone();
    let execution_id = turn.execution_id.clone();
    let why = reason.clone();
    let escalation = crate::kernel_call::kernel_op(turn, async move {
        kernel.record_escalation(&context, &why, &execution_id, &hard).await
    })
    .await?;
    turn.events.emit(EventKind::TurnEscalated, json!({ "reason": reason, "reviewer": escalation.reviewer }));
    Ok(Ending {
        status: ExecutionStatus::Escalated,
        output: None,
        error: None,
        escalation: Some(escalation),
        outcome_metadata: metadata,
    })
}

/// The catch path: drain wait (E49), then audit outage (E65, E73),
/// cancellation, or `runtime_failed` (E33).
pub(crate) async fn catch_path(
    turn: &Turn,
    thrown: Thrown,
    hook: Option<&TurnErrorHook>,
    who: &TurnErrorContext,
) -> Ending {
    let hard = turn.deadlines.hard().clone();
    if turn.deadlines.soft().is_aborted() && !hard.is_aborted() && !turn.in_flight.is_empty() {
        tokio::select! {
            biased;
            () = hard.aborted() => {}
            () = turn.in_flight.settled() => {}
        }
    }
    let safe = Some(turn.ledger.safe_to_retry());
    if let Some(outage) = turn.ledger.outage() {
        let code = ReasonCode::AuditUnavailable;
        turn.events.emit(EventKind::TurnFailed, failed_data(code.as_str(), "envelope"));
        report(hook, &TurnError::AuditUnavailable(outage), who);
        return Ending::with_error(ExecutionStatus::Failed, envelope_error(code, safe));
    }
    if turn.deadlines.soft().is_aborted() {
        turn.events.emit(EventKind::TurnCancelled, json!({}));
        return Ending::with_error(ExecutionStatus::Cancelled, envelope_error(ReasonCode::TurnCancelled, safe));
    }
    let code = ReasonCode::RuntimeFailed;
    turn.events.emit(EventKind::TurnFailed, failed_data(code.as_str(), "envelope"));
    let error = match thrown {
        Thrown::Runtime(failure) => TurnError::Runtime(failure),
        Thrown::Kernel(error) => TurnError::Kernel(error),
        Thrown::Aborted(reason) => TurnError::Kernel(KernelError::Aborted(reason)),
        Thrown::Outage(outage) => TurnError::AuditUnavailable(outage),
    };
    report(hook, &error, who);
    Ending::with_error(ExecutionStatus::Failed, envelope_error(code, safe))
}

/// Hands a contained throw to the host; whatever the hook throws is swallowed.
fn report(hook: Option<&TurnErrorHook>, error: &TurnError, who: &TurnErrorContext) {
    if let Some(hook) = hook {
        let _ = catch_unwind(AssertUnwindSafe(|| hook(error, who)));
    }
}

/// What `recordTurnEnd` writes for `result`; `failure_source` is the
/// `source` of the turn's last `turn.failed` event.
pub(crate) fn turn_end(result: &ExecutionResult, failure_source: Option<&str>) -> TurnEnd {
    let code = result.error.as_ref().map(|e| e.code.clone());
    let reason_code = match result.status {
        ExecutionStatus::Denied | ExecutionStatus::Failed => code.clone(),
        ExecutionStatus::Cancelled => {
            Some(code.clone().unwrap_or_else(|| ReasonCode::TurnCancelled.as_str().to_string()))
        }
        ExecutionStatus::Succeeded | ExecutionStatus::Escalated => None,
    };
    let ended_by = match (result.status, failure_source) {
        (ExecutionStatus::Failed, Some("runtime")) => Some(Source::Runtime),
        (ExecutionStatus::Failed, Some(_)) => Some(Source::Envelope),
        _ => None,
    };
    let fail_closed =
        result.status == ExecutionStatus::Failed && code.as_deref() == Some(ReasonCode::AuditUnavailable.as_str());
    TurnEnd { execution_id: result.execution_id.clone(), status: result.status, reason_code, ended_by, fail_closed }
}

#[cfg(test)]
mod tests {
    use super::envelope_error;
    use sharedos_model::codes::ReasonCode;

    /// Each ending the envelope writes itself carries its own fixed words,
    /// never a runtime's text, and the code and `retryable` it was given.
    #[test]
    fn every_envelope_ending_has_its_own_fixed_message() {
        let messages = [
            (ReasonCode::TurnCancelled, "The turn was cancelled before the runtime finished."),
            (ReasonCode::AuditUnavailable, "The turn stopped because a pre-effect audit record could not be written."),
            (ReasonCode::RuntimeFailed, "The runtime failed while running the turn."),
            (ReasonCode::InvalidRuntimeOutcome, "The runtime returned an outcome that does not match the contract."),
            (ReasonCode::ToolUnavailable, "Escalation is not available in this permission-filtered turn."),
            (ReasonCode::ActorMismatch, "The context's actor is not the executing agent."),
            (ReasonCode::ReceiverMismatch, "The message's receiver is not the executing agent."),
            (ReasonCode::MessageContextMismatch, "The message's trace or purpose differs from the context."),
            (ReasonCode::NoMatchingGrant, "The turn's authority does not grant permission to invoke this agent."),
        ];
        for (code, message) in messages {
            let error = envelope_error(code, Some(true));
            assert_eq!(
                (error.code.as_str(), error.message.as_str(), error.retryable),
                (code.as_str(), message, Some(true))
            );
        }
    }
}
