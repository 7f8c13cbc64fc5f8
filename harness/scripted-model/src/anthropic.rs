//! Anthropic's Messages API, streamed (`POST /v1/messages`, `stream: true`):
//! what Claude Code speaks, and Pi through a custom provider.

use crate::naming::{identifiers_in, PresentedName};
use crate::play::{call_id, call_index, Reply, FAILURE_MESSAGE, FINAL_TEXT};
use crate::view::{sse, RequestView, Then, Wire};
use serde_json::{json, Value};
use sharedos_conformance_metadata::witness::{bounded, Returned};

/// The API's name in the witness log.
pub const API: &str = "anthropic-messages";
/// The prefix of the ids this model gives its calls.
pub const CALL_PREFIX: &str = "toolu_";

/// Reads a request body.
#[must_use]
pub fn read(body: &Value) -> RequestView {
    let mut offered: Vec<PresentedName> = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|tool| tool.get("name").and_then(Value::as_str))
        .map(|name| PresentedName { namespace: None, name: name.to_string() })
        .collect();
    // A CLI that defers its MCP tools names them in a system or user text.
    for name in identifiers_in(&texts(body), "mcp__") {
        let name = PresentedName { namespace: None, name };
        if !offered.contains(&name) {
            offered.push(name);
        }
    }
    let mut asked = Vec::new();
    let mut returned = Vec::new();
    for message in body.get("messages").and_then(Value::as_array).into_iter().flatten() {
        for block in message.get("content").and_then(Value::as_array).into_iter().flatten() {
            match block.get("type").and_then(Value::as_str) {
                Some("tool_use") => {
                    asked.extend(block.get("id").and_then(Value::as_str).and_then(|id| call_index(CALL_PREFIX, id)));
                }
                Some("tool_result") => {
                    let index =
                        block.get("tool_use_id").and_then(Value::as_str).and_then(|id| call_index(CALL_PREFIX, id));
                    if let Some(index) = index {
                        let is_error = block.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                        let text = content_text(block.get("content"));
                        returned.push(Returned { index, is_error, text: bounded(&text) });
                    }
                }
                _ => {}
            }
        }
    }
    RequestView::read(offered, asked, returned)
}

/// The system prompt and every text block, joined: where deferred tools
/// are named.
fn texts(body: &Value) -> String {
    let mut text = content_text(body.get("system"));
    for message in body.get("messages").and_then(Value::as_array).into_iter().flatten() {
        text.push('\n');
        text.push_str(&content_text(message.get("content")));
    }
    text
}

/// A content value's text: a string, or the text of its blocks.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|block| match block {
                Value::String(text) => Some(text.as_str()),
                _ => block.get("text").and_then(Value::as_str),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The reply, as the API streams it; `model` echoes the request's.
#[must_use]
pub fn write(reply: &Reply<'_>, name: &PresentedName, model: &str, message_id: &str) -> Wire {
    let start = sse(
        "message_start",
        &json!({ "type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null, "usage": { "input_tokens": 1, "output_tokens": 1 } } }),
    );
    let (block, delta, stop_reason) = match reply {
        Reply::Call(index, call) => (
            json!({ "type": "tool_use", "id": call_id(CALL_PREFIX, *index), "name": name.name, "input": {} }),
            json!({ "type": "input_json_delta", "partial_json": Value::Object(call.arguments.clone()).to_string() }),
            "tool_use",
        ),
        Reply::Final => {
            (json!({ "type": "text", "text": "" }), json!({ "type": "text_delta", "text": FINAL_TEXT }), "end_turn")
        }
        Reply::CutShort => {
            (json!({ "type": "text", "text": "" }), json!({ "type": "text_delta", "text": "I will" }), "max_tokens")
        }
        Reply::Failure => return failure(),
        Reply::Stall => return Wire { status: 200, content_type: EVENT_STREAM, chunks: Vec::new(), then: Then::Hold },
        Reply::HangUp => {
            let begun = vec![
                start,
                sse(
                    "content_block_start",
                    &json!({ "type": "content_block_start", "index": 0,
                    "content_block": { "type": "text", "text": "" } }),
                ),
                sse(
                    "content_block_delta",
                    &json!({ "type": "content_block_delta", "index": 0,
                    "delta": { "type": "text_delta", "text": "I will" } }),
                ),
            ];
            return Wire { status: 200, content_type: EVENT_STREAM, chunks: begun, then: Then::Drop };
        }
    };
    let chunks = vec![
        start,
        sse("content_block_start", &json!({ "type": "content_block_start", "index": 0, "content_block": block })),
        sse("content_block_delta", &json!({ "type": "content_block_delta", "index": 0, "delta": delta })),
        sse("content_block_stop", &json!({ "type": "content_block_stop", "index": 0 })),
        sse(
            "message_delta",
            &json!({ "type": "message_delta",
            "delta": { "stop_reason": stop_reason, "stop_sequence": null }, "usage": { "output_tokens": 1 } }),
        ),
        sse("message_stop", &json!({ "type": "message_stop" })),
    ];
    Wire { status: 200, content_type: EVENT_STREAM, chunks, then: Then::End }
}

const EVENT_STREAM: &str = "text/event-stream";

/// The API's error for a failed turn: a 400 the client does not retry.
#[must_use]
pub fn failure() -> Wire {
    let body = json!({ "type": "error", "error": { "type": "invalid_request_error", "message": FAILURE_MESSAGE } });
    Wire { status: 400, content_type: "application/json", chunks: vec![body.to_string()], then: Then::End }
}

/// The answer to a token count (Claude Code asks before a long turn).
#[must_use]
pub fn token_count() -> Wire {
    let body = json!({ "input_tokens": 1 });
    Wire { status: 200, content_type: "application/json", chunks: vec![body.to_string()], then: Then::End }
}
