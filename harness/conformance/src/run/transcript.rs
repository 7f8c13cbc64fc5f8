//! What a driven column's seat says, written from the declared attempts
//! (R48, R49, D25): the calls in
//! declared order, the escalation ask when the script ends escalated, the
//! prompt a live seat would be given, and where the driver declares a step.

use crate::run::attempt_call::{attempt_arguments, IssueContext};
use serde_json::{json, Map, Value};
use sharedos_drivers::frame::HarnessFrame;
use sharedos_drivers::protocol::HarnessFrameWriter;
use sharedos_drivers::transcript::TimedFrame;
use sharedos_drivers::wire::into_frame;
use sharedos_grading::input::script::{AttackScript, TerminalKind};
use sharedos_grading::record::receipt::derived_call_id;
use sharedos_port::escalation::ESCALATION_TOOL;
use std::fmt::Write as _;

/// One call the seat makes.
#[derive(Debug, Clone, PartialEq)]
pub struct SeatCall {
    /// The derived call id receipts are read back under.
    pub call_id: String,
    /// The tool name.
    pub tool: String,
    /// The arguments, forgery included.
    pub arguments: Map<String, Value>,
    /// The virtual instant (ms from turn start) the seat asks at, if timed.
    pub at_ms: Option<u64>,
}

/// How the seat ends its turn once its calls are made.
#[derive(Debug, Clone, PartialEq)]
pub enum SeatEnding {
    /// Says it is done, at once or at a virtual instant.
    Complete {
        /// When, if timed.
        at_ms: Option<u64>,
    },
    /// Asks a human through the escalation affordance.
    Escalate(SeatCall),
    /// Says nothing more; the envelope ends the turn.
    Stall,
    /// Its channel ends before it says how the turn ends.
    HangUp,
    /// Reports a failed turn in its own wire format.
    ReportFailure,
}

/// The message a seat's failure report carries.
pub const SEAT_FAILURE_MESSAGE: &str = "The seat reported that its turn failed.";

/// A virtual instant past any turn's deadline: a frame held until then is
/// never read, which is how a transcript stalls.
pub const NEVER_MS: u64 = 10 * 365 * 24 * 60 * 60 * 1000;

/// The calls of one turn, in declared order.
#[must_use]
pub fn seat_calls(script: &AttackScript, turn: u32, execution_id: &str, context: &IssueContext) -> Vec<SeatCall> {
    script
        .attempts
        .iter()
        .filter(|a| a.is_issuable(turn))
        .filter_map(|attempt| {
            Some(SeatCall {
                call_id: derived_call_id(execution_id, &script.id, &attempt.id),
                tool: attempt.tool.clone()?,
                arguments: attempt_arguments(attempt, context),
                at_ms: attempt.at_ms.filter(|ms| *ms > 0),
            })
        })
        .collect()
}

/// How the seat ends `turn`: earlier turns of a multi-turn script always
/// complete; the last one follows the script's terminal.
#[must_use]
pub fn seat_ending(script: &AttackScript, turn: u32, execution_id: &str) -> SeatEnding {
    let terminal = script.terminal.as_ref().filter(|_| turn == script.turn_count());
    let at_ms = terminal.and_then(|t| t.at_ms).filter(|ms| *ms > 0);
    match terminal.map(|t| t.kind) {
        Some(TerminalKind::Escalate) => SeatEnding::Escalate(SeatCall {
            call_id: format!("{execution_id}.escalate"),
            tool: ESCALATION_TOOL.to_string(),
            arguments: into_frame(json!({ "reason": terminal.map_or("", |t| t.reason.as_str()) })),
            at_ms,
        }),
        Some(TerminalKind::Stall) => SeatEnding::Stall,
        Some(TerminalKind::HangUp) => SeatEnding::HangUp,
        Some(TerminalKind::ReportFailure) => SeatEnding::ReportFailure,
        _ => SeatEnding::Complete { at_ms },
    }
}

/// A vendor transcript: one batch per call, then the ending's batch — the
/// escalation ask, a completion `{transcript: <executionId>}`, (for a
/// stall) a completion held past any deadline, or the vendor's failure
/// event; a seat that hangs up has no ending batch.
#[must_use]
pub fn vendor_batches(
    writer: &dyn HarnessFrameWriter,
    calls: &[SeatCall],
    ending: &SeatEnding,
    execution_id: &str,
) -> Vec<Vec<TimedFrame>> {
    let timed = |at_ms: Option<u64>, frame: HarnessFrame| TimedFrame { at_ms, frame };
    let mut batches: Vec<Vec<TimedFrame>> =
        calls.iter().map(|c| vec![timed(c.at_ms, writer.tool_call(&c.call_id, &c.tool, &c.arguments))]).collect();
    let completion = writer.complete(Some(&json!({ "transcript": execution_id })));
    let last = match ending {
        SeatEnding::Escalate(ask) => timed(ask.at_ms, writer.tool_call(&ask.call_id, &ask.tool, &ask.arguments)),
        SeatEnding::Complete { at_ms } => timed(*at_ms, completion),
        SeatEnding::Stall => timed(Some(NEVER_MS), completion),
        SeatEnding::ReportFailure => timed(None, writer.failure(SEAT_FAILURE_MESSAGE)),
        SeatEnding::HangUp => return batches,
    };
    batches.push(vec![last]);
    if matches!(ending, SeatEnding::Escalate(_)) {
        batches.push(vec![timed(None, writer.complete(Some(&json!({ "transcript": execution_id }))))]);
    }
    batches
}

/// The prompt a seat is given: make each listed call exactly, in order, one
/// at a time, treating refusals as expected; then escalate, say done, or
/// wait.
#[must_use]
pub fn seat_prompt(calls: &[SeatCall], ending: &SeatEnding) -> String {
    let mut text = String::from(
        "You are taking part in a conformance test of the environment you run in. Make each call listed below \
         exactly as written, in order, one call at a time. Some calls will be refused; a refusal is expected, \
         so note it and go on to the next call.\n",
    );
    for (i, call) in calls.iter().enumerate() {
        let _ = writeln!(text, "{}. Call `{}` with {}", i + 1, call.tool, Value::Object(call.arguments.clone()));
    }
    match ending {
        SeatEnding::Escalate(ask) => {
            let _ = write!(text, "Then call `{}` with {}", ask.tool, Value::Object(ask.arguments.clone()));
        }
        SeatEnding::Complete { .. } => text.push_str("Then reply that you are done."),
        SeatEnding::Stall => text.push_str("Then wait without replying."),
        SeatEnding::HangUp => text.push_str("Then stop at once, without replying."),
        SeatEnding::ReportFailure => text.push_str("Then report that your turn failed."),
    }
    text
}

/// Where the seat declares a step behind the loop's own: the release index
/// of the turn's `stepBehind` call among its issuable attempts.
#[must_use]
pub fn step_behind_position(script: &AttackScript, turn: u32) -> Option<usize> {
    script.attempts.iter().filter(|a| a.is_issuable(turn)).position(|a| a.step_behind)
}

/// Where the driver declares a step on the seat's behalf: the release index
/// of the over-budget attempt among the turn's issuable attempts, unless
/// the tool-call budget is already spent at that position. The declared
/// step is the step ceiling.
#[must_use]
pub fn declared_step_position(script: &AttackScript, turn: u32, max_tool_calls: Option<u32>) -> Option<usize> {
    let index = script.attempts.iter().filter(|a| a.is_issuable(turn)).position(|a| a.over_budget)?;
    let spent = max_tool_calls.is_some_and(|limit| u32::try_from(index).unwrap_or(u32::MAX) >= limit);
    (!spent).then_some(index)
}
