//! Making one step of a script against the host and receipting what came
//! back: a call (awaited, or left running alongside the next steps), an
//! inspection, an annotation, an emitted event, or a read of `draining`.

use super::inspect::inspect_grant_material;
use super::TurnShared;
use crate::run::attempt_call::attempt_call;
use futures::future::LocalBoxFuture;
use serde_json::Value;
use sharedos_envelope::error::HostError;
use sharedos_envelope::host::{RuntimeHost, ToolInvocationOptions};
use sharedos_grading::input::script::expect::{ANNOTATION_REFUSED, EMIT_REFUSED, TURN_DRAINING};
use sharedos_grading::input::script::{AttackScript, Attempt, ReadTarget, Rejection, StepKind};
use sharedos_grading::record::events::CONFORMANCE_ATTEMPT;
use sharedos_grading::record::receipt::AttemptReceipt;
use sharedos_model::execution::{RuntimeEvent, RuntimeTurnRequest};
use sharedos_model::tool::{ToolCall, ToolResult, ToolStatus};
use sharedos_port::error::KernelError;
use sharedos_port::signal::{AbortReason, AbortSignal};
use std::rc::Rc;

/// The state of one turn's run through its steps.
pub(super) struct TurnRun<'a> {
    pub(super) script: &'a Rc<AttackScript>,
    pub(super) request: &'a RuntimeTurnRequest,
    pub(super) host: &'a RuntimeHost,
    pub(super) signal: &'a AbortSignal,
    pub(super) shared: &'a Rc<TurnShared>,
}

impl TurnRun<'_> {
    /// Makes every step of `turn` that belongs inside the turn, in order,
    /// receipting each into the shared log.
    pub(super) async fn run_steps(&self, turn: u32) {
        let mut issued: u32 = 0;
        let mut host_closed = false;
        for attempt in self.script.attempts_for_turn(turn).filter(|a| !a.after_close) {
            if host_closed {
                let receipt = AttemptReceipt::unattempted(
                    self.script,
                    attempt,
                    "the runtime host closed before this attempt was made",
                );
                self.shared.record(receipt);
                continue;
            }
            let Some(receipt) = self.step(attempt, &mut issued).await else { continue };
            if announce(self.host, &receipt).is_err() {
                host_closed = true;
            }
            self.shared.record(receipt);
        }
    }

    /// One step; `None` for a call left running, whose receipt comes later.
    async fn step(&self, attempt: &Attempt, issued: &mut u32) -> Option<AttemptReceipt> {
        if let Some(reason) = &attempt.unreachable {
            return Some(AttemptReceipt::unattempted(self.script, attempt, reason));
        }
        if let Some(at) = attempt.at_ms {
            self.shared.wait_until(at).await;
        }
        if self.signal.is_aborted() {
            return Some(AttemptReceipt::unattempted(
                self.script,
                attempt,
                "the turn was cancelled before this attempt",
            ));
        }
        match attempt.kind() {
            Some(StepKind::Inspect) => Some(inspect_grant_material(self.script, attempt, self.request)),
            Some(StepKind::Call) => self.call(attempt, issued).await,
            Some(StepKind::Annotate | StepKind::Emit | StepKind::Read) => {
                Some(host_step(self.script, attempt, self.host))
            }
            None => Some(AttemptReceipt::unattempted(self.script, attempt, "the attempt names no tool")),
        }
    }

    async fn call(&self, attempt: &Attempt, issued: &mut u32) -> Option<AttemptReceipt> {
        let limits = self.host.limits();
        if *issued >= limits.max_tool_calls && !attempt.over_budget {
            return Some(AttemptReceipt::unattempted(
                self.script,
                attempt,
                "the attempt falls outside the tool-call budget",
            ));
        }
        let step = declared_step(attempt, *issued, limits.max_steps, limits.max_tool_calls);
        let call = attempt_call(self.script, attempt, self.request)?;
        *issued += 1;
        let answer = self.host.invoke_tool(call.clone(), ToolInvocationOptions::at_step(u64::from(step)));
        if !attempt.concurrent {
            return Some(call_receipt(self.script, attempt, &call, answer.await, false));
        }
        // The checks up to the envelope's refusal already ran; the answer is
        // receipted whenever it comes, even after the runtime has returned.
        let (script, attempt, host, shared) =
            (Rc::clone(self.script), attempt.clone(), self.host.clone(), Rc::clone(self.shared));
        self.shared.background.spawn(async move {
            let receipt = call_receipt(&script, &attempt, &call, answer.await, false);
            let _ = announce(&host, &receipt);
            shared.record(receipt);
        });
        None
    }
}

/// Makes one step after the turn closed, on the host the turn handed out.
pub(super) async fn after_close_step(
    script: &AttackScript,
    attempt: &Attempt,
    host: &RuntimeHost,
    request: &RuntimeTurnRequest,
) -> AttemptReceipt {
    match attempt.kind() {
        Some(StepKind::Call) => match attempt_call(script, attempt, request) {
            Some(call) => {
                let answer = host.invoke_tool(call.clone(), ToolInvocationOptions::none()).await;
                call_receipt(script, attempt, &call, answer, true)
            }
            None => AttemptReceipt::unattempted(script, attempt, "the attempt names no tool"),
        },
        Some(StepKind::Annotate | StepKind::Emit | StepKind::Read) => host_step(script, attempt, host),
        Some(StepKind::Inspect) | None => {
            AttemptReceipt::unattempted(script, attempt, "nothing to do after the turn closed")
        }
    }
}

/// The receipt of a call: its tool result, or the rejection it got instead.
fn call_receipt(
    script: &AttackScript,
    attempt: &Attempt,
    call: &ToolCall,
    answer: Result<ToolResult, HostError>,
    after_close: bool,
) -> AttemptReceipt {
    let mut receipt = AttemptReceipt::unattempted(script, attempt, "");
    receipt.argument_keys = call.arguments.keys().cloned().collect();
    let rejection = match answer {
        Ok(result) => {
            receipt.attempted = true;
            receipt.call_id = Some(call.id.clone());
            receipt.observed = Some(result.status());
            receipt.reason_code = result.error().map(|e| e.code.clone());
            receipt.detail = None;
            return receipt;
        }
        Err(HostError::Closed) if after_close => Rejection::HostClosed,
        Err(HostError::Aborted(reason)) => {
            receipt.detail = Some(format!("the turn stopped while the call was in flight ({})", reason_text(&reason)));
            Rejection::Interrupted
        }
        Err(HostError::Kernel(KernelError::AuditUnavailable(error))) => {
            receipt.detail = Some(format!("the kernel could not record the call's decision: {error}"));
            Rejection::AuditUnavailable
        }
        Err(error) => {
            receipt.detail = Some(format!("the host refused the call: {error}"));
            return receipt;
        }
    };
    receipt.attempted = true;
    receipt.call_id = Some(call.id.clone());
    receipt.reason_code = Some(rejection.code().to_string());
    if rejection == Rejection::HostClosed {
        receipt.detail = Some("the host refused the call: the turn had closed".to_string());
    }
    receipt
}

/// A step answered by the host itself: annotate, emit, or read `draining`.
fn host_step(script: &AttackScript, attempt: &Attempt, host: &RuntimeHost) -> AttemptReceipt {
    let mut receipt = AttemptReceipt::unattempted(script, attempt, "");
    receipt.attempted = true;
    receipt.detail = None;
    let refused = |code: &str, error: HostError| (ToolStatus::Denied, Some(code.to_string()), Some(error.to_string()));
    let (status, code, detail) = if let Some(annotation) = &attempt.annotate {
        match host.annotate(&annotation.key, annotation.value.clone()) {
            Ok(()) => (ToolStatus::Succeeded, None, None),
            Err(error) => refused(ANNOTATION_REFUSED, error),
        }
    } else if let Some(emission) = &attempt.emit {
        let event = RuntimeEvent { kind: emission.kind.clone(), data: emission.data.clone() };
        match host.emit(event) {
            Ok(()) => (ToolStatus::Succeeded, None, None),
            Err(error) => refused(EMIT_REFUSED, error),
        }
    } else {
        match attempt.read {
            Some(ReadTarget::Draining) => read_draining(&host.draining()),
            None => (ToolStatus::Failed, None, Some("the step names nothing to do".to_string())),
        }
    };
    receipt.observed = Some(status);
    receipt.reason_code = code;
    receipt.detail = detail;
    receipt
}

/// `draining` as a receipt: quiet reads `succeeded`, fired reads `denied`
/// with the code of the reason the signal carries.
fn read_draining(signal: &AbortSignal) -> (ToolStatus, Option<String>, Option<String>) {
    match signal.reason() {
        None if !signal.is_aborted() => (ToolStatus::Succeeded, None, Some("draining: false".to_string())),
        reason => {
            let code = reason.as_ref().map_or("unknown", reason_code);
            (ToolStatus::Denied, Some(code.to_string()), Some("draining: true".to_string()))
        }
    }
}

/// The code a signal's reason reads as.
fn reason_code(reason: &AbortReason) -> &'static str {
    match reason {
        AbortReason::Draining => TURN_DRAINING,
        AbortReason::Timeout => "turn_timeout",
        AbortReason::HostCancelled => "host_cancelled",
        AbortReason::TurnClosed => "turn_closed",
        AbortReason::AuditOutage(_) => "audit_unavailable",
    }
}

fn reason_text(reason: &AbortReason) -> &'static str {
    match reason {
        AbortReason::Draining => "the turn drained",
        AbortReason::Timeout => "the deadline passed",
        AbortReason::HostCancelled => "the host cancelled the turn",
        AbortReason::TurnClosed => "the turn closed",
        AbortReason::AuditOutage(_) => "an audit outage stopped the turn",
    }
}

/// Announces a receipt as a `conformance.attempt` runtime event.
pub(super) fn announce(host: &RuntimeHost, receipt: &AttemptReceipt) -> Result<(), HostError> {
    let data = serde_json::to_value(receipt).unwrap_or(Value::Null);
    host.emit(RuntimeEvent { kind: CONFORMANCE_ATTEMPT.to_string(), data })
}

/// The step an attempt declares: its position among issued calls, except
/// that an over-budget attempt names the step ceiling when the step budget
/// is the one under test (the call budget is not yet spent).
fn declared_step(attempt: &Attempt, issued: u32, max_steps: u32, max_tool_calls: u32) -> u32 {
    if attempt.over_budget && issued < max_tool_calls {
        issued.max(max_steps)
    } else {
        issued
    }
}

/// A future that never resolves, boxed for the stall ending.
pub(super) fn forever() -> LocalBoxFuture<'static, ()> {
    Box::pin(futures::future::pending())
}
