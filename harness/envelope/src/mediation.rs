//! Mediating one `invoke_tool`, in the exact order the contract fixes:
//! liveness → call shape → step shape → `tool.requested` → draining → step
//! ceiling → call ceiling → catalogue → kernel round trip.

use crate::error::HostError;
use crate::events::{tool_data, EventKind};
use crate::turn::Turn;
use futures::future::{ready, LocalBoxFuture};
use sharedos_model::codes::ReasonCode;
use sharedos_model::tool::{ToolCall, ToolResult, ToolStatus};
use sharedos_model::validate::Validate;
use sharedos_port::error::KernelError;
use sharedos_port::signal::AbortReason;
use sharedos_port::turn_kernel::RefusedCall;
use std::rc::Rc;
use tokio::sync::oneshot;

/// Why the envelope refused a call itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// The soft signal has fired.
    Draining,
    /// The declared step is outside the step budget.
    StepLimit,
    /// The tool-call budget is spent.
    CallLimit,
    /// The tool is not in the turn's effective catalogue.
    NotOffered,
}

impl Refusal {
    fn code(self) -> ReasonCode {
        match self {
            Refusal::Draining => ReasonCode::TurnDraining,
            Refusal::StepLimit => ReasonCode::StepLimitExceeded,
            Refusal::CallLimit => ReasonCode::ToolCallLimitExceeded,
            Refusal::NotOffered => ReasonCode::ToolUnavailable,
        }
    }

    fn message(self) -> &'static str {
        match self {
            Refusal::Draining => "The turn is draining and takes no new tool calls.",
            Refusal::StepLimit => "The declared step is outside this turn's step budget.",
            Refusal::CallLimit => "This turn's tool-call budget is spent.",
            Refusal::NotOffered => "The tool is not available in this permission-filtered turn.",
        }
    }

    fn cause(self) -> Option<String> {
        (self == Refusal::NotOffered).then(|| "not_offered".to_string())
    }
}

/// Runs the synchronous checks now and the rest on the turn's task set.
pub(crate) fn invoke(
    turn: &Rc<Turn>,
    call: ToolCall,
    declared_step_claim: Option<f64>,
) -> LocalBoxFuture<'static, Result<ToolResult, HostError>> {
    if !turn.live() {
        return Box::pin(ready(Err(HostError::Closed)));
    }
    if let Err(error) = call.validate() {
        return Box::pin(ready(Err(HostError::InvalidCall(error))));
    }
    let step = match declared_step(declared_step_claim) {
        Ok(step) => step,
        Err(error) => return Box::pin(ready(Err(error))),
    };
    turn.events.emit(EventKind::ToolRequested, tool_data(&call.id, &call.tool, step, None));
    let (tx, rx) = oneshot::channel();
    turn.in_flight.started();
    match check_budgets(turn, &call, step) {
        Some(refusal) => refuse(turn, &call, step, refusal, tx),
        None => round_trip(turn, call, step, tx),
    }
    Box::pin(async move { rx.await.unwrap_or(Err(HostError::Closed)) })
}

/// The runtime's step claim as a step number, when it is a non-negative integer.
fn declared_step(claim: Option<f64>) -> Result<Option<u64>, HostError> {
    match claim {
        None => Ok(None),
        Some(step) if step.is_finite() && step >= 0.0 && step.fract() == 0.0 && step <= 9_007_199_254_740_991.0 => {
            // Checked above: a non-negative integer within f64's exact range.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            Ok(Some(step as u64))
        }
        Some(_) => Err(HostError::InvalidStep),
    }
}

/// Draining, step ceiling, call ceiling, catalogue — first refusal wins.
fn check_budgets(turn: &Turn, call: &ToolCall, step: Option<u64>) -> Option<Refusal> {
    if turn.deadlines.soft().is_aborted() {
        return Some(Refusal::Draining);
    }
    let max_steps = u64::from(turn.limits.max_steps);
    let mut budget = turn.budget.borrow_mut();
    if let Some(step) = step {
        let seen = budget.steps.contains(&step);
        let room = (budget.steps.len() as u64) < max_steps;
        if step >= max_steps || !(seen || room) {
            return Some(Refusal::StepLimit);
        }
        budget.steps.insert(step);
    }
    if budget.tool_calls >= turn.limits.max_tool_calls {
        return Some(Refusal::CallLimit);
    }
    budget.tool_calls += 1;
    drop(budget);
    if !turn.catalogue.borrow().offers(&call.tool) {
        return Some(Refusal::NotOffered);
    }
    None
}

type Reply = oneshot::Sender<Result<ToolResult, HostError>>;

/// Answers the call with an envelope refusal and records it with the kernel.
fn refuse(turn: &Rc<Turn>, call: &ToolCall, step: Option<u64>, refusal: Refusal, reply: Reply) {
    let code = refusal.code().as_str();
    let result = ToolResult::refusal(call, ToolStatus::Denied, code, refusal.message(), &turn.clock.now());
    turn.events.emit(EventKind::ToolCompleted, tool_data(&call.id, &call.tool, step, Some(("denied", Some(code)))));
    let refused = RefusedCall {
        call_id: call.id.clone(),
        tool: call.tool.clone(),
        reason_code: code.to_string(),
        cause: refusal.cause(),
    };
    let turn = turn.clone();
    let tasks = turn.tasks.clone();
    tasks.spawn(async move {
        let context = turn.context_now();
        turn.kernel.record_refused_call(&context, &refused).await;
        let _ = reply.send(Ok(result));
        turn.in_flight.finished();
    });
}

/// Hands the call to the kernel; bookkeeping rides on the kernel's own
/// future, while the answer to the runtime is raced against the hard signal.
fn round_trip(turn: &Rc<Turn>, call: ToolCall, step: Option<u64>, reply: Reply) {
    let repeatable = turn.catalogue.borrow().repeatable(&call.tool);
    if !repeatable {
        turn.ledger.write_sent();
    }
    let (ktx, krx) = oneshot::channel::<Result<ToolResult, KernelError>>();
    let kernel_turn = turn.clone();
    // Both halves read the call; neither changes it.
    let call = Rc::new(call);
    let kernel_call = Rc::clone(&call);
    let context = turn.context_now();
    turn.tasks.spawn(async move {
        let turn = kernel_turn;
        let hard = turn.deadlines.hard().clone();
        let answer = turn.kernel.invoke_tool(&context, &kernel_call, &hard).await;
        settle(&turn, &answer, repeatable);
        let _ = ktx.send(answer);
    });
    let turn = turn.clone();
    let tasks = turn.tasks.clone();
    tasks.spawn(async move {
        let answer = await_answer(&turn, &call, step, krx).await;
        let _ = reply.send(answer);
        turn.in_flight.finished();
    });
}

fn settle(turn: &Turn, answer: &Result<ToolResult, KernelError>, repeatable: bool) {
    match answer {
        Ok(result) if !repeatable => turn.ledger.write_answered(result),
        Ok(_) => {}
        Err(error) => {
            let hard_aborted = turn.deadlines.hard().is_aborted();
            if !repeatable {
                turn.ledger.write_rejected(error, hard_aborted);
            }
            if turn.ledger.watch(error) {
                if let Some(outage) = turn.ledger.outage() {
                    turn.deadlines.drain(AbortReason::AuditOutage(outage));
                }
            }
        }
    }
}

async fn await_answer(
    turn: &Turn,
    call: &ToolCall,
    step: Option<u64>,
    answer: oneshot::Receiver<Result<ToolResult, KernelError>>,
) -> Result<ToolResult, HostError> {
    let hard = turn.deadlines.hard().clone();
    let answer = tokio::select! {
        biased;
        () = hard.aborted() => return Err(HostError::Aborted(hard.reason().unwrap_or(AbortReason::TurnClosed))),
        answer = answer => answer,
    };
    let result = match answer {
        Ok(Ok(result)) => result,
        Ok(Err(error)) => return Err(HostError::Kernel(error)),
        Err(_) => return Err(HostError::Closed),
    };
    result.validate().map_err(HostError::InvalidToolResult)?;
    if !turn.live() {
        return Err(HostError::Closed);
    }
    let status = result.status().as_str();
    let code = result.error().map(|e| e.code.as_str());
    turn.events.emit(EventKind::ToolCompleted, tool_data(&call.id, &call.tool, step, Some((status, code))));
    Ok(result)
}
