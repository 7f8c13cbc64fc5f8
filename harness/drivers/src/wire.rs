//! Helpers every codec shares: argument parsing, the result body, content
//! blocks, and classifying a raw stream line.

use crate::frame::{HarnessFrame, HarnessStep};
use crate::live::IgnoredKind;
use serde::Serialize;
use serde_json::{json, Map, Value};
use sharedos_model::tool::{ToolOutcome, ToolResult};

/// The object a `json!` literal builds, as a frame (anything else, which a
/// literal object never is, gives an empty frame).
#[must_use]
pub fn into_frame(value: Value) -> HarnessFrame {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Parses a vendor's arguments string. Blank means `{}`; only a JSON object
/// is accepted (invalid JSON, arrays, primitives and null give `None`).
#[must_use]
pub fn parse_tool_arguments(raw: &str) -> Option<Map<String, Value>> {
    if raw.trim().is_empty() {
        return Some(Map::new());
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// The body every vendor encoder sends back as text: `{status, output}` on
/// success, `{status, error: {code, message}}` otherwise. `retryable` and
/// `details` are not disclosed to the harness.
#[must_use]
pub fn tool_result_body(result: &ToolResult) -> Value {
    match &result.outcome {
        ToolOutcome::Succeeded { output } => json!({"status": "succeeded", "output": output}),
        ToolOutcome::Denied { error } | ToolOutcome::Failed { error } => json!({
            "status": result.status().as_str(),
            "error": {"code": error.code, "message": error.message},
        }),
    }
}

/// The body of [`tool_result_body`], borrowed, so that writing its text
/// copies nothing first.
#[derive(Serialize)]
#[serde(untagged)]
enum BodyRef<'a> {
    // Fields in sorted order, as a `Value` object writes them.
    Succeeded { output: &'a Value, status: &'static str },
    Refused { error: ErrorRef<'a>, status: &'static str },
}

#[derive(Serialize)]
struct ErrorRef<'a> {
    code: &'a str,
    message: &'a str,
}

/// The JSON text of [`tool_result_body`] (the same bytes).
#[must_use]
pub fn tool_result_text(result: &ToolResult) -> String {
    let status = result.status().as_str();
    let body = match &result.outcome {
        ToolOutcome::Succeeded { output } => BodyRef::Succeeded { output, status },
        ToolOutcome::Denied { error } | ToolOutcome::Failed { error } => {
            BodyRef::Refused { error: ErrorRef { code: &error.code, message: &error.message }, status }
        }
    };
    // Serialising borrowed strings and a `Value` cannot fail.
    serde_json::to_string(&body).unwrap_or_default()
}

/// Whether `value` is a content block at all: an object with a string `type`.
#[must_use]
pub fn is_block(value: &Value) -> bool {
    value.get("type").is_some_and(Value::is_string)
}

/// A vendor's reader of one call block.
pub type CallReader<'a> = dyn Fn(&Map<String, Value>) -> Option<HarnessStep> + 'a;

/// Walks content blocks in order: text blocks become `message` steps, other
/// blocks are offered to `read_call`, and anything else is skipped. Returns
/// `None` when some element is not a block at all, which voids the frame.
#[must_use]
pub fn content_block_steps(blocks: &[Value], read_call: Option<&CallReader<'_>>) -> Option<Vec<HarnessStep>> {
    if !blocks.iter().all(is_block) {
        return None;
    }
    let mut steps = Vec::new();
    for block in blocks {
        let Value::Object(map) = block else { continue };
        if map.get("type").and_then(Value::as_str) == Some("text") {
            if let Some(text) = map.get("text").and_then(Value::as_str) {
                steps.push(HarnessStep::Message { text: text.to_string() });
            }
            continue;
        }
        if let Some(step) = read_call.and_then(|read| read(map)) {
            steps.push(step);
        }
    }
    Some(steps)
}

/// A non-empty string field.
#[must_use]
pub fn non_empty<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str).filter(|text| !text.is_empty())
}

/// Classifies one raw stream line: a JSON object, or why it is ignored.
///
/// # Errors
/// The [`IgnoredKind`] of a blank, non-JSON or non-object line.
pub fn parse_line(line: &str) -> Result<HarnessFrame, IgnoredKind> {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return Err(IgnoredKind::Blank);
    }
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(IgnoredKind::NotObject),
        Err(_) => Err(IgnoredKind::NotJson),
    }
}
