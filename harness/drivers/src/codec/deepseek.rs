//! DeepSeek Harness: protocol id `deepseek.harness.session-events`.
//!
//! DeepSeek Harness is driven as a JSON-RPC 2.0 SDK server over stdio. The
//! server notifies `session.event{sessionId, event{type, seq, time, data}}`
//! for every session in its runtime (sub-agent children included), plus
//! `session.status`, `subagent.started` and `subagent.finished`; it answers
//! the client's requests (`initialize`, `session/prompt`, `shutdown`) with
//! results or JSON-RPC errors.
//!
//! # Reading a frame (`interpret`)
//!
//! An event is read wrapped (`{method:"session.event", params:{event}}`) or
//! bare (`{type, data}`); the wrapped form is tried first.
//!
//! - `tool/call{callId, name, arguments: JSON text}` is the only source of
//!   calls. Arguments that are not a JSON object give a non-retryable
//!   `harness_arguments_unparseable`; a malformed payload gives nothing.
//! - `assistant/message` gives its text blocks as prose. Its call blocks are
//!   skipped: the same call arrives as its own `tool/call`.
//! - `turn/end{reason{kind, error?}}`: `aborted`, `blocked`, `error` and
//!   `interrupted` give a retryable `failed` step (code: the vendor's
//!   `error.code`, else `harness_turn_<kind>` with `-` as `_`); any other
//!   kind completes the turn.
//! - Everything else gives no step.
//!
//! The catalogue has no frame on this wire: [`DeepSeekProtocol::describe_tools`]
//! renders the `ToolSchema` shape for the out-of-band channel (the MCP client
//! plugin), and the manifest says `catalogueDelivery: "out-of-band"`.
//!
//! # Writing (`DeepSeekWriter`)
//!
//! Every frame is a wrapped event of session `session-1`. `complete` writes
//! `turn/end{reason:{kind:"completed"}}`, which has no payload, so its output
//! is dropped and a completed turn's output is the prose read before it.
//!
//! # Departures from SharedOS's reading
//!
//! The real server's stream (captured under `tests/streams/deepseek/`)
//! differs from the shape
//! SharedOS assumed; where it does, this codec follows the real stream.
//!
//! 1. **`turn/end` with kind `max-tokens` completes the turn.** SharedOS
//!    fails it (`harness_turn_max_tokens`). The server records `max-tokens`
//!    even on turns a plugin continued to completion, so the kind alone does
//!    not say the turn failed. The kind is kept: the `complete` step carries
//!    `metadata: {"turnEndKind": "max-tokens"}`.
//! 2. **A JSON-RPC error response fails the turn.** SharedOS reads every
//!    response as no step. The server answers a refused `session/prompt`
//!    with an error and then emits nothing for that turn, so a reader that
//!    ignores the error waits forever. `interpret` has no request ids, and
//!    on a stdio pipe the server answers only its one client, so any error
//!    response is read as a non-retryable `harness_request_rejected` (message:
//!    the error's `message`; the JSON-RPC code kept as `details.rpcCode`).
//!    The live reader narrows this to its own request ids when it knows them.
//! 3. **A failing `turn/end` without `error.message` falls back to
//!    `reason.reason`** (the server's free-text reason) before a fixed
//!    sentence.
//! 4. **Live streams are read by [`DeepSeekLiveReader`], not `interpret`.**
//!    `interpret` reads one frame and cannot tell sessions apart; the live
//!    reader keeps to the prompted session and reports calls as observations
//!    of calls the CLI ran itself (see its docs).
//!
//! The result frame follows SharedOS: a `session/prompt` notification with a
//! `tool-result` block and no `sessionId`. The real server has no input for a
//! tool result, so the frame only serves transcript columns; on a live run the
//! catalogue reaches the CLI over MCP and nothing is written back.

mod event;
mod live;

pub use live::DeepSeekLiveReader;

use crate::frame::{HarnessFrame, HarnessStep};
use crate::protocol::{listed_tool, HarnessFrameWriter, HarnessProtocol};
use crate::wire::{into_frame, tool_result_text};
use event::{error_response, event_meaning, session_event, unparseable_arguments_step, EventMeaning};
use serde_json::{json, Map, Value};
use sharedos_model::tool::{ToolDefinition, ToolResult, ToolStatus};
use std::sync::Arc;

/// The protocol id.
pub const PROTOCOL_ID: &str = "deepseek.harness.session-events";

/// The session id every written frame names.
pub const WRITER_SESSION_ID: &str = "session-1";

/// DeepSeek Harness's session-event vocabulary as the eval driver reads it.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeepSeekProtocol;

impl HarnessProtocol for DeepSeekProtocol {
    fn id(&self) -> &'static str {
        PROTOCOL_ID
    }

    fn describe_tools(&self, tools: &[Arc<ToolDefinition>]) -> Value {
        Value::Array(tools.iter().map(|tool| Value::Object(listed_tool(tool, "parameters"))).collect())
    }

    fn interpret(&self, frame: &HarnessFrame) -> Vec<HarnessStep> {
        if let Some(event) = session_event(frame) {
            return match event_meaning(&event) {
                EventMeaning::Call(step) | EventMeaning::TurnEnd(step) => vec![step],
                EventMeaning::UnparseableArguments => vec![unparseable_arguments_step()],
                EventMeaning::Prose(steps) => steps,
                EventMeaning::Malformed | EventMeaning::Irrelevant | EventMeaning::Unknown => Vec::new(),
            };
        }
        error_response(frame).map(|(_, step)| vec![step]).unwrap_or_default()
    }

    fn encode_tool_result(&self, result: &ToolResult) -> HarnessFrame {
        into_frame(json!({
            "jsonrpc": "2.0",
            "method": "session/prompt",
            "params": {"contentBlocks": [{
                "type": "tool-result",
                "toolCallId": result.call_id,
                "content": [{"type": "text", "text": tool_result_text(result)}],
                "isError": result.status() != ToolStatus::Succeeded,
            }]},
        }))
    }
}

/// Writes wrapped session events that [`DeepSeekProtocol`] reads back.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeepSeekWriter;

impl HarnessFrameWriter for DeepSeekWriter {
    fn protocol_id(&self) -> &'static str {
        PROTOCOL_ID
    }

    fn tool_call(&self, call_id: &str, tool: &str, arguments: &Map<String, Value>) -> HarnessFrame {
        let arguments = Value::Object(arguments.clone()).to_string();
        session_event_frame(
            "tool/call",
            json!({"turn": 1, "step": 1, "callId": call_id, "name": tool, "arguments": arguments}),
        )
    }

    fn message(&self, text: &str) -> HarnessFrame {
        session_event_frame(
            "assistant/message",
            json!({"turn": 1, "step": 1, "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}),
        )
    }

    fn complete(&self, _output: Option<&Value>) -> HarnessFrame {
        session_event_frame("turn/end", json!({"turn": 1, "reason": {"kind": "completed"}}))
    }

    /// A `turn/end` of kind `error`.
    fn failure(&self, message: &str) -> HarnessFrame {
        session_event_frame("turn/end", json!({"turn": 1, "reason": {"kind": "error", "reason": message}}))
    }
}

fn session_event_frame(kind: &str, data: Value) -> HarnessFrame {
    into_frame(json!({
        "jsonrpc": "2.0",
        "method": "session.event",
        "params": {
            "sessionId": WRITER_SESSION_ID,
            "event": {"type": kind, "seq": 1, "time": 0, "data": data},
        },
    }))
}
