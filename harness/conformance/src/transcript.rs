//! What a driven column's seat says, written from the declared attempts
//! (`10-conformance.md` §4.4, `40-messaging-drivers.md` §3.5): the calls in
//! declared order, the escalation ask when the script ends escalated, the
//! prompt a live seat would be given, and where the driver declares a step.

use crate::attempt_call::attempt_arguments;
use crate::receipt::derived_call_id;
use crate::script::{AttackScript, Attempt, TerminalKind};
use serde_json::{json, Map, Value};
use sharedos_drivers::frame::HarnessFrame;
use sharedos_drivers::protocol::HarnessFrameWriter;
use sharedos_model::access::RuntimeVisibleContext;
use std::fmt::Write as _;

/// The escalation affordance's tool name.
pub const ESCALATE_TOOL: &str = "sharedos.escalate";

/// One call the seat makes.
#[derive(Debug, Clone, PartialEq)]
pub struct SeatCall {
    /// The derived call id receipts are read back under.
    pub call_id: String,
    /// The tool name.
    pub tool: String,
    /// The arguments, forgery included.
    pub arguments: Map<String, Value>,
}

/// Whether a seat that only speaks tool calls can make `attempt` in `turn`:
/// it belongs to the turn, is not declared unreachable, is not an
/// inspection, and names a tool.
#[must_use]
pub fn is_issuable(attempt: &Attempt, turn: u32) -> bool {
    attempt.turn == turn && attempt.unreachable.is_none() && attempt.inspect.is_none() && attempt.tool.is_some()
}

/// The calls of one turn, in declared order.
#[must_use]
pub fn seat_calls(
    script: &AttackScript,
    turn: u32,
    execution_id: &str,
    context: &RuntimeVisibleContext,
) -> Vec<SeatCall> {
    script
        .attempts
        .iter()
        .filter(|a| is_issuable(a, turn))
        .filter_map(|attempt| {
            Some(SeatCall {
                call_id: derived_call_id(execution_id, &script.id, &attempt.id),
                tool: attempt.tool.clone()?,
                arguments: attempt_arguments(attempt, context),
            })
        })
        .collect()
}

/// The escalation ask of a script whose last turn ends escalated.
#[must_use]
pub fn escalation_call(script: &AttackScript, turn: u32, execution_id: &str) -> Option<SeatCall> {
    let terminal = script.terminal.as_ref().filter(|t| t.kind == TerminalKind::Escalate)?;
    (turn == script.turn_count()).then(|| SeatCall {
        call_id: format!("{execution_id}.escalate"),
        tool: ESCALATE_TOOL.to_string(),
        arguments: object(json!({ "reason": terminal.reason })),
    })
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A vendor transcript: one batch per call, the escalation batch when there
/// is one, then a completion batch `{transcript: <executionId>}`.
#[must_use]
pub fn vendor_batches(
    writer: &dyn HarnessFrameWriter,
    calls: &[SeatCall],
    escalation: Option<&SeatCall>,
    execution_id: &str,
) -> Vec<Vec<HarnessFrame>> {
    let mut batches: Vec<Vec<HarnessFrame>> =
        calls.iter().chain(escalation).map(|c| vec![writer.tool_call(&c.call_id, &c.tool, &c.arguments)]).collect();
    batches.push(vec![writer.complete(Some(&json!({ "transcript": execution_id })))]);
    batches
}

/// The prompt a seat is given: make each listed call exactly, in order, one
/// at a time, treating refusals as expected; then escalate or say done.
#[must_use]
pub fn seat_prompt(calls: &[SeatCall], escalation: Option<&SeatCall>) -> String {
    let mut text = String::from(
        "You are taking part in a conformance test of the environment you run in. Make each call listed below \
         exactly as written, in order, one call at a time. Some calls will be refused; a refusal is expected, \
         so note it and go on to the next call.\n",
    );
    for (i, call) in calls.iter().enumerate() {
        let _ = writeln!(text, "{}. Call `{}` with {}", i + 1, call.tool, Value::Object(call.arguments.clone()));
    }
    match escalation {
        Some(ask) => {
            let _ = write!(text, "Then call `{}` with {}", ask.tool, Value::Object(ask.arguments.clone()));
        }
        None => text.push_str("Then reply that you are done."),
    }
    text
}

/// Where the driver declares a step on the seat's behalf: the release index
/// of the over-budget attempt among the turn's issuable attempts, unless
/// the tool-call budget is already spent at that position. The declared
/// step is the step ceiling.
#[must_use]
pub fn declared_step_position(script: &AttackScript, turn: u32, max_tool_calls: Option<u32>) -> Option<usize> {
    let index = script.attempts.iter().filter(|a| is_issuable(a, turn)).position(|a| a.over_budget)?;
    let spent = max_tool_calls.is_some_and(|limit| u32::try_from(index).unwrap_or(u32::MAX) >= limit);
    (!spent).then_some(index)
}
