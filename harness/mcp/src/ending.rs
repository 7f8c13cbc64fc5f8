//! The turn's ending as the harness's own stdout tells it (D49). Tool
//! calls seen there are ignored: calls leave over MCP, and acting on one
//! from stdout would open a second, unmediated path.

use crate::harness::HarnessExit;
use serde_json::{json, Map, Value};
use sharedos_drivers::codec::pi::retry_follows;
use sharedos_drivers::frame::HarnessStep;
use sharedos_drivers::protocol::HarnessProtocol;
use sharedos_envelope::runtime::{complete, fail};
use sharedos_model::tool::ProtocolError;

/// The code of a harness that could not be started.
pub const HARNESS_NOT_STARTED: &str = "harness_not_started";
/// The code of a harness that exited non-zero without an ending.
pub const HARNESS_EXITED_WITHOUT_OUTCOME: &str = "harness_exited_without_outcome";

/// Whether `frame` is an ending Pi went back on: an `agent_end` after a
/// transient failure, followed by Pi's `auto_retry_start`.
fn retried(frame: &Map<String, Value>, next: Option<&Map<String, Value>>) -> bool {
    let retry_started = next.and_then(|next| next.get("type")).and_then(Value::as_str) == Some("auto_retry_start");
    retry_started && retry_follows(frame)
}

/// The outcome of a harness `id` that ended as `exit`, its stdout read by
/// `protocol`: the first terminal frame wins, but for one its CLI went
/// back on to retry; without one, a clean exit completes with the prose
/// it wrote and any other exit fails.
#[must_use]
pub fn harness_outcome(id: &str, protocol: &dyn HarnessProtocol, exit: &HarnessExit) -> Value {
    let (code, stdout): (i32, &[String]) = match exit {
        HarnessExit::NotStarted { .. } => {
            return fail(ProtocolError::new(HARNESS_NOT_STARTED, format!("The {id} CLI could not be started.")));
        }
        HarnessExit::Exited { code, stdout } => (*code, stdout),
        // Stopped by the turn's signal: it said nothing that decides the turn.
        HarnessExit::Stopped => (-1, &[]),
    };
    let mut messages = Vec::new();
    let frames: Vec<Map<String, Value>> =
        stdout.iter().filter_map(|line| serde_json::from_str::<Map<String, Value>>(line).ok()).collect();
    for (index, frame) in frames.iter().enumerate() {
        if retried(frame, frames.get(index + 1)) {
            // Pi failed a model call and tried it again: a later ending decides.
            continue;
        }
        for step in protocol.interpret(frame) {
            match step {
                HarnessStep::Message { text } => messages.push(text),
                HarnessStep::Failed { error } => return fail(error),
                HarnessStep::Complete { output, .. } => {
                    return complete(output.unwrap_or_else(|| json!({ "text": messages.join("\n") })));
                }
                HarnessStep::ToolCall { .. } => {}
            }
        }
    }
    if code == 0 {
        return complete(json!({ "text": messages.join("\n") }));
    }
    fail(ProtocolError::new(
        HARNESS_EXITED_WITHOUT_OUTCOME,
        format!("The {id} CLI exited with code {code} without completing the turn."),
    ))
}
