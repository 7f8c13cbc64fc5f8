//! The Claude Code protocol: reading one frame, rendering the catalogue
//! with `input_schema`, and handing a result back as a `user` frame.

use super::PROTOCOL_ID;
use crate::frame::{HarnessFrame, HarnessStep};
use crate::protocol::{listed_tool, HarnessProtocol};
use crate::wire::{content_block_steps, non_empty, tool_result_text};
use serde_json::{json, Map, Value};
use sharedos_model::tool::{ToolDefinition, ToolResult, ToolStatus};
use std::sync::Arc;

/// The code of a failure nothing names.
const HARNESS_FAILED: &str = "harness_failed";

/// The message of a failure that carries none.
const FAILURE_MESSAGE: &str = "The Claude Code harness reported a failure.";

/// The model name the CLI gives the assistant frame it writes itself when
/// the API or the account fails.
const SYNTHETIC_MODEL: &str = "<synthetic>";

/// Reads Claude Code's stream-json frames.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaudeCodeProtocol;

impl HarnessProtocol for ClaudeCodeProtocol {
    fn id(&self) -> &'static str {
        PROTOCOL_ID
    }

    fn describe_tools(&self, tools: &[Arc<ToolDefinition>]) -> Value {
        Value::Array(tools.iter().map(|tool| Value::Object(listed_tool(tool, "input_schema"))).collect())
    }

    fn interpret(&self, frame: &HarnessFrame) -> Vec<HarnessStep> {
        if is_sub_agent(frame) {
            return Vec::new();
        }
        match frame.get("type").and_then(Value::as_str) {
            Some("assistant") if synthetic_error(frame).is_none() => assistant_steps(frame).unwrap_or_default(),
            Some("result") => match read_result(frame, None) {
                Some(ending) => vec![ending.into_step()],
                None => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    fn encode_tool_result(&self, result: &ToolResult) -> HarnessFrame {
        let block = json!({
            "type": "tool_result",
            "tool_use_id": result.call_id,
            "is_error": result.status() != ToolStatus::Succeeded,
            "content": [{ "type": "text", "text": tool_result_text(result) }],
        });
        let mut frame = Map::new();
        frame.insert("type".into(), json!("user"));
        frame.insert("message".into(), json!({ "role": "user", "content": [block] }));
        frame
    }
}

/// How a `result` frame ends the turn.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum ResultEnding {
    /// The turn completed, with the frame's `result` when it has one.
    Complete {
        /// The `result` text.
        text: Option<String>,
    },
    /// The turn failed.
    Failed {
        /// Never `success`.
        code: String,
        /// Never blank.
        message: String,
    },
}

impl ResultEnding {
    /// The step this ending gives to `interpret`: a completion without
    /// text is a bare `complete`.
    fn into_step(self) -> HarnessStep {
        match self {
            ResultEnding::Complete { text } => {
                HarnessStep::Complete { output: text.map(|text| json!({ "text": text })), metadata: None }
            }
            ResultEnding::Failed { code, message } => {
                let retryable = retryable(&code);
                HarnessStep::failed(&code, &message, retryable)
            }
        }
    }
}

/// Whether a turn that failed with `code` may succeed if run again. A
/// request the API refused as such (a 4xx other than a timeout or a rate
/// limit) and a limit the turn itself reached (its turns, its output
/// tokens, its budget) fail the same way every time; a lost connection, an
/// overloaded or failing server, or a stream that went idle may not.
#[must_use]
pub(super) fn retryable(code: &str) -> bool {
    const FINAL: [&str; 8] = [
        "error_max_turns",
        "max_turns",
        "max_output_tokens",
        "error_max_budget_usd",
        "error_max_structured_output_retries",
        "invalid_request",
        "authentication_failed",
        "billing_error",
    ];
    let client_error = code.strip_prefix("api_error_4").is_some_and(|rest| !matches!(rest, "08" | "29"));
    !client_error && !FINAL.contains(&code)
}

/// Whether a frame was produced inside a sub-agent: its
/// `parent_tool_use_id` is present and not null.
pub(super) fn is_sub_agent(frame: &HarnessFrame) -> bool {
    frame.get("parent_tool_use_id").is_some_and(|parent| !parent.is_null())
}

/// For the synthetic assistant frame of an API failure: `Some` with its
/// error code (`None` inside when it names none). `None` for a real frame.
///
/// The code is the frame's `api_error` when it names one, else its `error`.
/// Claude Code 2.1.328 writes both on this frame: `error` is the SDK's
/// coarse class (`server_error` for a dropped stream, `unknown` for an HTTP
/// 400), `api_error` what actually failed (`connection_failed`,
/// `max_output_tokens`, `stream_idle_timeout`); `unknown` names nothing.
pub(super) fn synthetic_error(frame: &HarnessFrame) -> Option<Option<&str>> {
    let error = frame.get("error").filter(|error| !error.is_null());
    let model = frame.get("message").and_then(|message| message.get("model")).and_then(Value::as_str);
    if error.is_none() && model != Some(SYNTHETIC_MODEL) {
        return None;
    }
    Some(named_code(frame, "api_error").or_else(|| named_code(frame, "error")))
}

/// The CLI's word for an error it could not class: it names nothing.
const UNCLASSED_ERROR: &str = "unknown";

/// A string field that names a failure: not blank, not `success`, and not
/// the CLI's `unknown`.
fn named_code<'a>(frame: &'a HarnessFrame, key: &str) -> Option<&'a str> {
    frame.get(key).and_then(Value::as_str).map(str::trim).filter(|code| usable_code(code))
}

/// Whether `code` names a failure (see [`named_code`]).
fn usable_code(code: &str) -> bool {
    !code.is_empty() && code != "success" && code != UNCLASSED_ERROR
}

/// The steps of an assistant frame, in block order; `None` when the frame
/// does not have the assistant shape (no content array, or an element that
/// is not a block).
pub(super) fn assistant_steps(frame: &HarnessFrame) -> Option<Vec<HarnessStep>> {
    let blocks = frame.get("message")?.get("content")?.as_array()?;
    let reader: &dyn Fn(&Map<String, Value>) -> Option<HarnessStep> = &tool_use_step;
    content_block_steps(blocks, Some(reader))
}

/// A `tool_use` block with a non-empty id and name, and an object input
/// (absent meaning `{}`); anything else is dropped.
fn tool_use_step(block: &Map<String, Value>) -> Option<HarnessStep> {
    if block.get("type").and_then(Value::as_str) != Some("tool_use") {
        return None;
    }
    let call_id = non_empty(block, "id")?;
    let tool = non_empty(block, "name")?;
    let arguments = match block.get("input") {
        None => Map::new(),
        Some(Value::Object(input)) => input.clone(),
        Some(_) => return None,
    };
    Some(HarnessStep::ToolCall { call_id: call_id.to_string(), tool: tool.to_string(), arguments })
}

/// A field read leniently: `null` is absent; `Err` when present with the
/// wrong type.
fn field<'a, T>(frame: &'a HarnessFrame, key: &str, read: fn(&'a Value) -> Option<T>) -> Result<Option<T>, ()> {
    match frame.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => read(value).map(Some).ok_or(()),
    }
}

/// Reads a `result` frame; `None` when `subtype`, `is_error` or `result`
/// has the wrong type. `remembered_error` is the synthetic frame's code,
/// used when the result names none.
pub(super) fn read_result(frame: &HarnessFrame, remembered_error: Option<&str>) -> Option<ResultEnding> {
    let subtype = field(frame, "subtype", Value::as_str).ok()?;
    let is_error = field(frame, "is_error", Value::as_bool).ok()?.unwrap_or(false);
    let result = field(frame, "result", Value::as_str).ok()?;
    let error_subtype = subtype.is_some_and(|subtype| subtype.starts_with("error"));
    if !is_error && !error_subtype {
        return Some(ResultEnding::Complete { text: result.map(str::to_string) });
    }
    let code = match subtype.map(str::trim).filter(|subtype| !subtype.is_empty() && *subtype != "success") {
        Some(subtype) => subtype.to_string(),
        None => derived_code(frame, remembered_error),
    };
    let message = joined_errors(frame)
        .or_else(|| result.filter(|text| !text.trim().is_empty()).map(str::to_string))
        .unwrap_or_else(|| FAILURE_MESSAGE.to_string());
    Some(ResultEnding::Failed { code, message })
}

/// The code of a failure whose subtype is `success` or absent, from what
/// the real CLI writes on such a `result` (Claude Code 2.1.328, captured):
///
/// 1. `api_error`, what failed (`connection_failed` for a dropped stream,
///    `max_output_tokens`, `stream_idle_timeout`); it is the most precise
///    name and sits on the `result` itself;
/// 2. `error`;
/// 3. the synthetic frame's code (`remembered_error`);
/// 4. `api_error_<api_error_status>` (an HTTP 400 carries only its status:
///    the synthetic frame's `error` is then `unknown`, which names nothing
///    and is skipped at every step, so the code is `api_error_400`, not
///    `unknown`);
/// 5. `terminal_reason` when it is not `completed` (`api_error`,
///    `max_turns`, `aborted_streaming`);
/// 6. `harness_failed`.
fn derived_code(frame: &HarnessFrame, remembered_error: Option<&str>) -> String {
    let remembered = remembered_error.map(str::trim).filter(|code| usable_code(code));
    if let Some(code) = named_code(frame, "api_error").or_else(|| named_code(frame, "error")).or(remembered) {
        return code.to_string();
    }
    match frame.get("api_error_status") {
        Some(Value::Number(status)) => return format!("api_error_{status}"),
        Some(Value::String(status)) if !status.trim().is_empty() => return format!("api_error_{}", status.trim()),
        _ => {}
    }
    match named_code(frame, "terminal_reason") {
        Some(reason) if reason != "completed" => reason.to_string(),
        _ => HARNESS_FAILED.to_string(),
    }
}

/// The non-blank strings of `errors[]`, joined; `None` when there are none.
fn joined_errors(frame: &HarnessFrame) -> Option<String> {
    let errors: Vec<&str> = frame
        .get("errors")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .filter(|text| !text.trim().is_empty())
        .collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}
