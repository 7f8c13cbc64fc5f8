//! Reading one DeepSeek Harness frame: a session event in either form, or a
//! JSON-RPC error response. Shared by `interpret` and the live reader so the
//! two never disagree on what a single frame means.

use crate::frame::{HarnessFrame, HarnessStep};
use crate::wire::{content_block_steps, non_empty, parse_tool_arguments};
use serde_json::{Map, Value};
use sharedos_model::tool::ProtocolError;

/// The code of a failed step for `tool/call` arguments that are not an object.
pub(super) const ARGUMENTS_UNPARSEABLE: &str = "harness_arguments_unparseable";

/// The code of a failed step for a JSON-RPC error answering a request.
pub(super) const REQUEST_REJECTED: &str = "harness_request_rejected";

/// The `turn/end` kind that is recorded but does not fail the turn.
const MAX_TOKENS: &str = "max-tokens";

/// One session event, with the session it names when it is wrapped.
#[derive(Debug, Clone, Copy)]
pub(super) struct SessionEvent<'a> {
    /// `params.sessionId` of a wrapped event; `None` for the bare form.
    pub session_id: Option<&'a str>,
    /// `event.type`.
    pub kind: &'a str,
    /// `event.data`.
    pub data: &'a Map<String, Value>,
}

/// What one session event means.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum EventMeaning {
    /// A `tool/call` whose arguments parse to an object.
    Call(HarnessStep),
    /// A `tool/call` whose arguments are not a JSON object.
    UnparseableArguments,
    /// The prose of an `assistant/message`, possibly none.
    Prose(Vec<HarnessStep>),
    /// A `turn/end`: the terminal step.
    TurnEnd(HarnessStep),
    /// A known event type whose `data` has the wrong shape.
    Malformed,
    /// A known event type that carries nothing for the turn.
    Irrelevant,
    /// An event type this codec does not know.
    Unknown,
}

/// Reads a session event, trying the wrapped `session.event` notification
/// first and the bare `{type, data}` form second.
#[must_use]
pub(super) fn session_event(frame: &HarnessFrame) -> Option<SessionEvent<'_>> {
    wrapped_event(frame).or_else(|| event_fields(frame))
}

fn wrapped_event(frame: &HarnessFrame) -> Option<SessionEvent<'_>> {
    if frame.get("method").and_then(Value::as_str) != Some("session.event") {
        return None;
    }
    let params = frame.get("params")?.as_object()?;
    let mut event = event_fields(params.get("event")?.as_object()?)?;
    event.session_id = params.get("sessionId").and_then(Value::as_str);
    Some(event)
}

fn event_fields(map: &Map<String, Value>) -> Option<SessionEvent<'_>> {
    let kind = non_empty(map, "type")?;
    let data = map.get("data")?.as_object()?;
    Some(SessionEvent { session_id: None, kind, data })
}

/// What `event` means, independent of which session it belongs to.
#[must_use]
pub(super) fn event_meaning(event: &SessionEvent<'_>) -> EventMeaning {
    match event.kind {
        "tool/call" => tool_call(event.data),
        "assistant/message" => prose(event.data),
        "turn/end" => turn_end(event.data).map_or(EventMeaning::Malformed, EventMeaning::TurnEnd),
        "turn/start" | "step/start" | "step/end" | "user/message" | "assistant/chunk" | "tool/result" => {
            EventMeaning::Irrelevant
        }
        _ => EventMeaning::Unknown,
    }
}

fn tool_call(data: &Map<String, Value>) -> EventMeaning {
    let (Some(call_id), Some(tool), Some(raw)) =
        (non_empty(data, "callId"), non_empty(data, "name"), data.get("arguments").and_then(Value::as_str))
    else {
        return EventMeaning::Malformed;
    };
    match parse_tool_arguments(raw) {
        Some(arguments) => EventMeaning::Call(HarnessStep::ToolCall {
            call_id: call_id.to_string(),
            tool: tool.to_string(),
            arguments,
        }),
        None => EventMeaning::UnparseableArguments,
    }
}

/// The failed step for arguments that are not a JSON object; not retryable,
/// because the same call would carry the same arguments again.
#[must_use]
pub(super) fn unparseable_arguments_step() -> HarnessStep {
    HarnessStep::failed(
        ARGUMENTS_UNPARSEABLE,
        "DeepSeek Harness sent tool arguments that do not parse to a JSON object.",
        false,
    )
}

/// Text blocks only: a call inside the message also arrives as its own
/// `tool/call` event, and reading both would issue it twice.
fn prose(data: &Map<String, Value>) -> EventMeaning {
    let blocks = data.get("message").and_then(Value::as_object).and_then(|message| message.get("content"));
    match blocks.and_then(Value::as_array).and_then(|blocks| content_block_steps(blocks, None)) {
        Some(steps) => EventMeaning::Prose(steps),
        None => EventMeaning::Malformed,
    }
}

fn turn_end(data: &Map<String, Value>) -> Option<HarnessStep> {
    let reason = data.get("reason")?.as_object()?;
    let kind = non_empty(reason, "kind")?;
    let Some(sentence) = failure_sentence(kind) else {
        if kind == MAX_TOKENS {
            let mut metadata = Map::new();
            metadata.insert("turnEndKind".into(), Value::String(kind.to_string()));
            return Some(HarnessStep::Complete { output: None, metadata: Some(metadata) });
        }
        return Some(HarnessStep::bare_complete());
    };
    let error = reason.get("error").and_then(Value::as_object);
    let code = error
        .and_then(|error| non_empty(error, "code"))
        .map_or_else(|| format!("harness_turn_{}", kind.replace('-', "_")), str::to_string);
    let message =
        error.and_then(|error| non_empty(error, "message")).or_else(|| non_empty(reason, "reason")).unwrap_or(sentence);
    Some(HarnessStep::failed(&code, message, true))
}

/// The fallback message of a failing `turn/end` kind; `None` for a kind that
/// does not fail the turn.
fn failure_sentence(kind: &str) -> Option<&'static str> {
    match kind {
        "aborted" => Some("The DeepSeek Harness turn was aborted before it finished."),
        "blocked" => Some("The DeepSeek Harness turn was blocked before it finished."),
        "error" => Some("The DeepSeek Harness turn stopped on an error."),
        "interrupted" => Some("The DeepSeek Harness turn was interrupted and did not finish."),
        _ => None,
    }
}

/// A JSON-RPC error response: an `id`, an `error` object, and no `method`.
/// Returns the id it answers and the failed step it means.
#[must_use]
pub(super) fn error_response(frame: &HarnessFrame) -> Option<(&Value, HarnessStep)> {
    if frame.contains_key("method") {
        return None;
    }
    let id = frame.get("id")?;
    let error = frame.get("error")?.as_object()?;
    Some((id, rejected_step(id, error)))
}

/// Not retryable: the server refused the request itself, and the same
/// request would be refused the same way.
fn rejected_step(id: &Value, error: &Map<String, Value>) -> HarnessStep {
    let message = non_empty(error, "message")
        .map_or_else(|| format!("The DeepSeek Harness server answered request {id} with an error."), str::to_string);
    let mut failure = ProtocolError::new(REQUEST_REJECTED, message);
    if let Some(code) = error.get("code") {
        let mut details = Map::new();
        details.insert("rpcCode".into(), code.clone());
        failure.details = Some(details);
    }
    HarnessStep::Failed { error: failure }
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
