//! OpenAI's Responses API, streamed (`POST /responses`, `stream: true`):
//! what Codex speaks.

use crate::naming::PresentedName;
use crate::play::{call_id, call_index, Reply, FAILURE_MESSAGE, FINAL_TEXT};
use crate::view::{sse, RequestView, Then, Wire};
use serde_json::{json, Value};
use sharedos_conformance_metadata::witness::{bounded, Returned};

/// The API's name in the witness log.
pub const API: &str = "openai-responses";
/// The prefix of the ids this model gives its calls.
pub const CALL_PREFIX: &str = "call_";

/// Reads a request body.
#[must_use]
pub fn read(body: &Value) -> RequestView {
    let mut offered = Vec::new();
    for tool in body.get("tools").and_then(Value::as_array).into_iter().flatten() {
        let name = tool.get("name").and_then(Value::as_str);
        match (tool.get("type").and_then(Value::as_str), name) {
            (Some("namespace"), Some(namespace)) => {
                for inner in tool.get("tools").and_then(Value::as_array).into_iter().flatten() {
                    if let Some(inner) = inner.get("name").and_then(Value::as_str) {
                        offered.push(PresentedName { namespace: Some(namespace.to_string()), name: inner.to_string() });
                    }
                }
            }
            (_, Some(name)) => offered.push(PresentedName { namespace: None, name: name.to_string() }),
            _ => {}
        }
    }
    let mut asked = Vec::new();
    let mut returned = Vec::new();
    for item in body.get("input").and_then(Value::as_array).into_iter().flatten() {
        let index = item.get("call_id").and_then(Value::as_str).and_then(|id| call_index(CALL_PREFIX, id));
        match (item.get("type").and_then(Value::as_str), index) {
            (Some("function_call"), Some(index)) => asked.push(index),
            (Some("function_call_output"), Some(index)) => {
                let (text, is_error) = output_text(item.get("output"));
                returned.push(Returned { index, is_error, text: bounded(&text) });
            }
            _ => {}
        }
    }
    RequestView::read(offered, asked, returned)
}

/// A call's output as text, and whether it says it failed: a string, or
/// content items, or an object with `success: false`.
fn output_text(output: Option<&Value>) -> (String, bool) {
    match output {
        Some(Value::String(text)) => (text.clone(), false),
        Some(Value::Array(items)) => {
            let texts: Vec<&str> = items.iter().filter_map(|item| item.get("text").and_then(Value::as_str)).collect();
            (texts.join("\n"), false)
        }
        Some(Value::Object(object)) => {
            let failed = object.get("success").and_then(Value::as_bool) == Some(false);
            let text = object.get("content").map_or_else(
                || Value::Object(object.clone()).to_string(),
                |c| match c {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                },
            );
            (text, failed)
        }
        Some(other) => (other.to_string(), false),
        None => (String::new(), false),
    }
}

fn usage() -> Value {
    json!({ "input_tokens": 1, "input_tokens_details": { "cached_tokens": 0 }, "output_tokens": 1,
            "output_tokens_details": { "reasoning_tokens": 0 }, "total_tokens": 2 })
}

fn response(id: &str, model: &str, status: &str, output: &[Value]) -> Value {
    json!({ "id": id, "object": "response", "created_at": 0, "status": status, "model": model,
            "output": output, "usage": usage() })
}

/// The reply, as the API streams it; `model` echoes the request's.
#[must_use]
pub fn write(reply: &Reply<'_>, name: &PresentedName, model: &str, response_id: &str) -> Wire {
    let created = sse(
        "response.created",
        &json!({ "type": "response.created", "response": response(response_id, model, "in_progress", &[]) }),
    );
    let message = |text: &str| {
        json!({ "type": "message", "id": format!("msg_{response_id}"), "role": "assistant", "status": "completed",
                "content": [{ "type": "output_text", "text": text, "annotations": [] }] })
    };
    let (item, status) = match reply {
        Reply::Call(index, call) => {
            let mut item = json!({ "type": "function_call", "id": format!("fc_{response_id}"),
                "call_id": call_id(CALL_PREFIX, *index), "name": name.name,
                "arguments": Value::Object(call.arguments.clone()).to_string(), "status": "completed" });
            if let Some(namespace) = &name.namespace {
                item["namespace"] = json!(namespace);
            }
            (item, "completed")
        }
        Reply::Final => (message(FINAL_TEXT), "completed"),
        Reply::CutShort => (message("I will"), "incomplete"),
        Reply::Failure => return failure(),
        Reply::Stall => return Wire { status: 200, content_type: EVENT_STREAM, chunks: Vec::new(), then: Then::Hold },
        Reply::HangUp => {
            let added = sse(
                "response.output_item.added",
                &json!({ "type": "response.output_item.added",
                "output_index": 0, "item": { "type": "message", "id": format!("msg_{response_id}"),
                "role": "assistant", "status": "in_progress", "content": [] } }),
            );
            return Wire { status: 200, content_type: EVENT_STREAM, chunks: vec![created, added], then: Then::Drop };
        }
    };
    let done = sse(
        "response.output_item.done",
        &json!({ "type": "response.output_item.done", "output_index": 0, "item": item }),
    );
    let mut finished = response(response_id, model, status, &[item]);
    let ending = if status == "incomplete" {
        finished["incomplete_details"] = json!({ "reason": "max_output_tokens" });
        sse("response.incomplete", &json!({ "type": "response.incomplete", "response": finished }))
    } else {
        sse("response.completed", &json!({ "type": "response.completed", "response": finished }))
    };
    Wire { status: 200, content_type: EVENT_STREAM, chunks: vec![created, done, ending], then: Then::End }
}

const EVENT_STREAM: &str = "text/event-stream";

/// The API's error for a failed turn: a 400 the client does not retry.
#[must_use]
pub fn failure() -> Wire {
    let body = json!({ "error": { "message": FAILURE_MESSAGE, "type": "invalid_request_error", "param": null, "code": null } });
    Wire { status: 400, content_type: "application/json", chunks: vec![body.to_string()], then: Then::End }
}
