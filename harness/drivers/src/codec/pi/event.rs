//! Reading one Pi RPC line, shared by `interpret` and the live reader so the
//! two never disagree on what a single frame means.

use crate::frame::{HarnessFrame, HarnessStep};
use crate::wire::{content_block_steps, non_empty};
use serde_json::{Map, Value};

/// The code of a failed step for a command Pi refused.
pub(super) const COMMAND_REJECTED: &str = "harness_command_rejected";

/// The code of a failed step for an error Pi reported.
pub(super) const FAILED: &str = "harness_failed";

/// The code of a failed step for a run Pi aborted.
pub(super) const ABORTED: &str = "harness_turn_aborted";

/// The code of a failed step for a reply cut short by its token limit.
pub(super) const MAX_TOKENS: &str = "harness_turn_max_tokens";

/// What one Pi line means.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum PiMeaning {
    /// An assistant `message_end`: its prose and calls, in block order, and
    /// the failure its stop reason states, if any.
    Assistant {
        /// Prose and call steps.
        steps: Vec<HarnessStep>,
        /// A `failed` step when `stopReason` is `error`, `aborted` or
        /// `length`.
        failure: Option<HarnessStep>,
    },
    /// A `response{success:false}` or an `error` event: a failed step.
    Failure(HarnessStep),
    /// An `agent_end`.
    AgentEnd {
        /// `willRetry`, when the build writes it.
        will_retry: Option<bool>,
        /// The failure of the last assistant message in `messages`, if any.
        failure: Option<HarnessStep>,
    },
    /// A known type that carries nothing for the turn.
    Irrelevant,
    /// A known type whose shape does not match what Pi writes.
    Malformed,
    /// A type this codec does not know (or no `type` at all).
    Unknown,
}

/// What `frame` means.
#[must_use]
pub(super) fn pi_meaning(frame: &HarnessFrame) -> PiMeaning {
    let Some(kind) = frame.get("type").and_then(Value::as_str) else {
        return PiMeaning::Unknown;
    };
    match kind {
        "message_end" => message_end(frame),
        "response" => response(frame),
        "error" => error_event(frame),
        "agent_end" => agent_end(frame),
        "agent_start"
        | "agent_settled"
        | "turn_start"
        | "turn_end"
        | "message_start"
        | "message_update"
        | "tool_execution_start"
        | "tool_execution_update"
        | "tool_execution_end"
        | "auto_compaction_start"
        | "auto_compaction_end"
        | "compaction_start"
        | "compaction_end"
        | "auto_retry_start"
        | "auto_retry_end"
        | "extension_error"
        // An extension's request to Pi's user interface: status lines and
        // notices, which carry nothing for the turn.
        | "extension_ui_request" => PiMeaning::Irrelevant,
        _ => PiMeaning::Unknown,
    }
}

fn message_end(frame: &HarnessFrame) -> PiMeaning {
    let Some(message) = frame.get("message").and_then(Value::as_object) else {
        return PiMeaning::Malformed;
    };
    if message.get("role").and_then(Value::as_str) != Some("assistant") {
        return PiMeaning::Irrelevant;
    }
    let stop_reason = message.get("stopReason");
    if stop_reason.is_some_and(|reason| !reason.is_string()) {
        return PiMeaning::Malformed;
    }
    let blocks = message.get("content").and_then(Value::as_array);
    match blocks.and_then(|blocks| content_block_steps(blocks, Some(&tool_call))) {
        Some(steps) => PiMeaning::Assistant { steps, failure: stop_failure(message) },
        None => PiMeaning::Malformed,
    }
}

/// A `toolCall` block; arguments are an object on Pi's wire, and a block
/// with anything else there, or an empty id or name, is dropped.
fn tool_call(block: &Map<String, Value>) -> Option<HarnessStep> {
    if block.get("type").and_then(Value::as_str) != Some("toolCall") {
        return None;
    }
    let call_id = non_empty(block, "id")?;
    let tool = non_empty(block, "name")?;
    let arguments = match block.get("arguments") {
        None => Map::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(_) => return None,
    };
    Some(HarnessStep::ToolCall { call_id: call_id.to_string(), tool: tool.to_string(), arguments })
}

/// The failure an assistant message's stop reason states: `error` (a
/// provider or model failure), `aborted`, or `length` (the reply was cut
/// short by its token limit); message: its `errorMessage`.
///
/// `length` fails the turn because Pi does not go on after it: Pi 0.73.1,
/// given a reply stopped on `max_tokens`, writes that truncated message, a
/// plain `agent_end` and nothing more (exit 0, no continuation request;
/// `tests/streams/pi/real-0.73.1/max-tokens.jsonl`), so the turn's answer
/// is the cut text. Read as a completion, the cut would pass for an answer.
/// Run again, the same turn meets the same limit: unlike a failed or
/// aborted model call, it is not retryable.
#[must_use]
pub(super) fn stop_failure(message: &Map<String, Value>) -> Option<HarnessStep> {
    let (code, fallback, retryable) = match message.get("stopReason").and_then(Value::as_str)? {
        "error" => (FAILED, "The Pi model call stopped on an error.", true),
        "aborted" => (ABORTED, "The Pi run was aborted before it finished.", true),
        "length" => (MAX_TOKENS, "The Pi model's reply was cut short by its token limit.", false),
        _ => return None,
    };
    Some(HarnessStep::failed(code, non_empty(message, "errorMessage").unwrap_or(fallback), retryable))
}

fn response(frame: &HarnessFrame) -> PiMeaning {
    match frame.get("success").and_then(Value::as_bool) {
        Some(true) => PiMeaning::Irrelevant,
        Some(false) => {
            let message = non_empty(frame, "error").map_or_else(
                || format!("Pi refused the {} command.", non_empty(frame, "command").unwrap_or("requested")),
                str::to_string,
            );
            PiMeaning::Failure(HarnessStep::failed(COMMAND_REJECTED, &message, true))
        }
        None => PiMeaning::Malformed,
    }
}

/// SharedOS's `error` event. Real Pi writes none (a provider failure is an
/// assistant message that stopped with `error`), but the shape is still read.
fn error_event(frame: &HarnessFrame) -> PiMeaning {
    let message = match frame.get("message") {
        None => None,
        Some(Value::String(text)) => Some(text.as_str()).filter(|text| !text.is_empty()),
        Some(_) => return PiMeaning::Malformed,
    };
    let message = message.unwrap_or("The Pi harness reported an error.");
    PiMeaning::Failure(HarnessStep::failed(FAILED, message, true))
}

fn agent_end(frame: &HarnessFrame) -> PiMeaning {
    let will_retry = match frame.get("willRetry") {
        None => None,
        Some(Value::Bool(flag)) => Some(*flag),
        Some(_) => return PiMeaning::Malformed,
    };
    let last_assistant = frame.get("messages").and_then(Value::as_array).and_then(|messages| {
        messages
            .iter()
            .rev()
            .filter_map(Value::as_object)
            .find(|message| message.get("role").and_then(Value::as_str) == Some("assistant"))
    });
    PiMeaning::AgentEnd { will_retry, failure: last_assistant.and_then(stop_failure) }
}

/// The text of prose steps, one block per line.
#[must_use]
pub(super) fn joined_text(steps: &[HarnessStep]) -> Option<String> {
    let texts: Vec<&str> = steps
        .iter()
        .filter_map(|step| match step {
            HarnessStep::Message { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}
