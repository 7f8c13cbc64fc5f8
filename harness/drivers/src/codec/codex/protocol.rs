//! The Codex protocol: reading one frame, rendering the catalogue as
//! functions, and handing a result back as a `function_call_output`.

use super::PROTOCOL_ID;
use crate::frame::{HarnessFrame, HarnessStep};
use crate::protocol::{listed_tool, HarnessProtocol};
use crate::wire::{non_empty, parse_tool_arguments, tool_result_text};
use serde_json::{json, Map, Value};
use sharedos_model::tool::{ToolDefinition, ToolResult};
use std::sync::Arc;

/// The code of a failure the vendor did not name.
pub(super) const HARNESS_FAILED: &str = "harness_failed";

/// The message of a `response.failed` that carries none.
const RESPONSE_FAILED_MESSAGE: &str = "The Codex harness reported a failure.";

/// The message of a `turn.failed` whose error message is blank.
pub(super) const TURN_FAILED_MESSAGE: &str = "The Codex CLI reported a failed turn.";

/// The code of a `function_call` whose arguments are not an object.
const ARGUMENTS_UNPARSEABLE: &str = "harness_arguments_unparseable";

/// The message that goes with [`ARGUMENTS_UNPARSEABLE`].
const ARGUMENTS_UNPARSEABLE_MESSAGE: &str = "Codex sent tool arguments that are not a JSON object.";

/// Reads Codex frames in the Responses shape and the CLI's event shape.
#[derive(Debug, Clone, Copy, Default)]
pub struct CodexProtocol;

impl HarnessProtocol for CodexProtocol {
    fn id(&self) -> &'static str {
        PROTOCOL_ID
    }

    fn describe_tools(&self, tools: &[Arc<ToolDefinition>]) -> Value {
        Value::Array(
            tools
                .iter()
                .map(|tool| {
                    let mut entry = listed_tool(tool, "parameters");
                    entry.insert("type".to_string(), Value::from("function"));
                    Value::Object(entry)
                })
                .collect(),
        )
    }

    fn interpret(&self, frame: &HarnessFrame) -> Vec<HarnessStep> {
        match frame.get("type").and_then(Value::as_str) {
            Some("function_call") => function_call_steps(frame),
            Some("response.failed") => response_failed_steps(frame),
            Some("response.completed") => response_completed_steps(frame),
            Some("message") => message_steps(frame),
            Some("item.completed") => item_completed_steps(frame),
            Some("turn.completed") => vec![HarnessStep::bare_complete()],
            Some("turn.failed") => turn_failed_steps(frame),
            _ => Vec::new(),
        }
    }

    fn encode_tool_result(&self, result: &ToolResult) -> HarnessFrame {
        let mut frame = Map::new();
        frame.insert("type".into(), json!("function_call_output"));
        frame.insert("call_id".into(), Value::String(result.call_id.clone()));
        frame.insert("output".into(), Value::String(tool_result_text(result)));
        frame
    }
}

/// An optional field of a schema: absent is `Ok(None)`, present with the
/// wrong type is `Err(())` (which voids the frame).
fn optional<'a, T>(map: &'a Map<String, Value>, key: &str, read: fn(&'a Value) -> Option<T>) -> Result<Option<T>, ()> {
    match map.get(key) {
        None => Ok(None),
        Some(value) => read(value).map(Some).ok_or(()),
    }
}

/// A string that says something: not empty, not only whitespace.
fn not_blank(text: Option<&str>) -> Option<&str> {
    text.filter(|text| !text.trim().is_empty())
}

/// Shape 1: a Responses `function_call`.
fn function_call_steps(frame: &HarnessFrame) -> Vec<HarnessStep> {
    let (Some(call_id), Some(name), Some(raw)) =
        (non_empty(frame, "call_id"), non_empty(frame, "name"), frame.get("arguments").and_then(Value::as_str))
    else {
        return Vec::new();
    };
    match parse_tool_arguments(raw) {
        Some(arguments) => {
            vec![HarnessStep::ToolCall { call_id: call_id.to_string(), tool: name.to_string(), arguments }]
        }
        None => vec![HarnessStep::failed(ARGUMENTS_UNPARSEABLE, ARGUMENTS_UNPARSEABLE_MESSAGE, false)],
    }
}

/// Shape 2: `response.failed` (the CLI's top-level `error` is not read).
fn response_failed_steps(frame: &HarnessFrame) -> Vec<HarnessStep> {
    let Ok(top_message) = optional(frame, "message", Value::as_str) else { return Vec::new() };
    let Ok(error) = optional(frame, "error", Value::as_object) else { return Vec::new() };
    let empty = Map::new();
    let error = error.unwrap_or(&empty);
    let (Ok(code), Ok(message)) = (optional(error, "code", Value::as_str), optional(error, "message", Value::as_str))
    else {
        return Vec::new();
    };
    let code = not_blank(code).unwrap_or(HARNESS_FAILED);
    let message = not_blank(message).or(not_blank(top_message)).unwrap_or(RESPONSE_FAILED_MESSAGE);
    vec![HarnessStep::failed(code, message, true)]
}

/// Shape 3: `response.completed`, with the output text when there is one.
fn response_completed_steps(frame: &HarnessFrame) -> Vec<HarnessStep> {
    let Ok(response) = optional(frame, "response", Value::as_object) else { return Vec::new() };
    let output_text = match response {
        None => None,
        Some(response) => match optional(response, "output_text", Value::as_str) {
            Ok(text) => text,
            Err(()) => return Vec::new(),
        },
    };
    let output = output_text.map(|text| json!({ "text": text }));
    vec![HarnessStep::Complete { output, metadata: None }]
}

/// Shape 4: a Responses `message`, one step per `output_text` block.
fn message_steps(frame: &HarnessFrame) -> Vec<HarnessStep> {
    let Some(blocks) = frame.get("content").and_then(Value::as_array) else { return Vec::new() };
    if !blocks.iter().all(crate::wire::is_block) {
        return Vec::new();
    }
    blocks
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("output_text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .map(|text| HarnessStep::Message { text: text.to_string() })
        .collect()
}

/// Shape 5: a completed agent message item, unless its text is blank.
fn item_completed_steps(frame: &HarnessFrame) -> Vec<HarnessStep> {
    let Some(item) = frame.get("item").and_then(Value::as_object) else { return Vec::new() };
    match agent_message_text(item) {
        Some(text) if !text.trim().is_empty() => vec![HarnessStep::Message { text: text.to_string() }],
        _ => Vec::new(),
    }
}

/// Shape 7: `turn.failed`, always retryable `harness_failed`.
fn turn_failed_steps(frame: &HarnessFrame) -> Vec<HarnessStep> {
    let Ok(error) = optional(frame, "error", Value::as_object) else { return Vec::new() };
    let message = match error {
        None => None,
        Some(error) => match optional(error, "message", Value::as_str) {
            Ok(message) => message,
            Err(()) => return Vec::new(),
        },
    };
    vec![HarnessStep::failed(HARNESS_FAILED, not_blank(message).unwrap_or(TURN_FAILED_MESSAGE), true)]
}

/// An item's kind, under either naming: `type` (current builds) or
/// `item_type` (older builds), with the old `assistant_message` read as
/// `agent_message`.
pub(super) fn item_kind(item: &Map<String, Value>) -> Option<&str> {
    let kind = item.get("type").or_else(|| item.get("item_type")).and_then(Value::as_str)?;
    Some(if kind == "assistant_message" { "agent_message" } else { kind })
}

/// The text of an agent message item, under either naming.
pub(super) fn agent_message_text(item: &Map<String, Value>) -> Option<&str> {
    if item_kind(item) != Some("agent_message") {
        return None;
    }
    item.get("text").and_then(Value::as_str)
}

/// The message a `turn.failed` line carries, when it is not blank; read
/// leniently, for the live reader, which ends the turn whatever the shape.
pub(super) fn turn_failed_message(frame: &HarnessFrame) -> Option<&str> {
    not_blank(frame.get("error").and_then(|error| error.get("message")).and_then(Value::as_str))
}
