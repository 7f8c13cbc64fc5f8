//! Pi: protocol id `pi.rpc.jsonl`.
//!
//! `pi --mode rpc` writes newline-delimited JSON: `response{command,
//! success, error?}` to each command, and events (`agent_start`,
//! `turn_start`/`turn_end`, `message_start`/`message_update`/`message_end`,
//! `tool_execution_*`, `auto_retry_*`, compaction events, `agent_end{messages,
//! willRetry?}`, and in newer builds `agent_settled`).
//!
//! # Reading a frame (`interpret`)
//!
//! Only the assembled message is read; the deltas in `message_update` are
//! not, or every call would be issued twice.
//!
//! 1. An assistant `message_end` gives its text and `toolCall` blocks in
//!    order (`toolCall{id, name, arguments?: object}`; a missing `arguments`
//!    is `{}`). A call block with non-object arguments or an empty id or name
//!    is dropped; an element that is not a block at all voids the frame.
//! 2. `response{success:false}` gives a retryable `harness_command_rejected`
//!    (message: its `error`).
//! 3. `error{message?}` gives a retryable `harness_failed`.
//! 4. `agent_end` gives nothing when `willRetry` is true (the run is not
//!    over); otherwise it ends the turn.
//! 5. Anything else gives nothing: `message_end` of a user or `toolResult`
//!    message, `message_update`, `tool_execution_*`, `agent_start`, ….
//!
//! Pi declares no tools on its wire: [`PiProtocol::describe_tools`] renders
//! the SDK's `defineTool` shape (`label` repeats the name) for the
//! out-of-band channel, and the manifest says `catalogueDelivery:
//! "out-of-band"`.
//!
//! # Writing (`PiWriter`)
//!
//! Calls and prose are assistant `message_end` frames (stop reason `toolUse`
//! for a call, `stop` for prose); `complete` writes `agent_end{willRetry:
//! false}`, which has no payload, so its output is dropped and the turn's
//! output is the prose read before it; `failure` writes the same `agent_end`
//! with `messages` ending in an assistant message stopped on an error.
//!
//! # Departures from SharedOS's reading
//!
//! The real stream (captured under `tests/streams/pi/`) differs from the
//! shape SharedOS
//! assumed; where it does, this codec follows the real stream.
//!
//! 1. **A provider failure fails the turn.** Real Pi has no `error` event: a
//!    provider or model failure is an assistant `message_end` with
//!    `stopReason: "error"` (or `"aborted"`) and `errorMessage`, followed by
//!    an ordinary `agent_end{willRetry:false}`. SharedOS reads that
//!    `agent_end` as a completion. One frame cannot remember an earlier one,
//!    so `interpret` reads the failed `message_end` for its content only, and
//!    reads the failure from the terminal `agent_end` itself, whose
//!    `messages` hold the run's messages: when the last assistant message
//!    there stopped with `error` the `agent_end` gives a retryable
//!    `harness_failed`, with `aborted` a retryable `harness_turn_aborted`,
//!    message: its `errorMessage`. An `agent_end` without `messages` (what
//!    [`PiWriter`] writes) still completes. The live reader remembers the
//!    last assistant `message_end` instead (see [`PiLiveReader`]).
//! 2. **Builds without `willRetry`** emit a plain `agent_end` for every
//!    retry attempt. `interpret` must read it as terminal (one frame cannot
//!    see the retry that follows); the live reader treats it as provisional
//!    and lets a following `auto_retry_start` reopen the turn.
//! 3. **`agent_settled`** (newer builds) is known and gives nothing.
//! 4. **The `error` event is still read** with SharedOS's shape, although
//!    real Pi never writes it, so a harness speaking that shape keeps working.
//! 5. **A reply cut short by its token limit fails the turn.** Pi maps the
//!    API's `max_tokens` stop to `stopReason: "length"`, writes the cut
//!    message and an ordinary `agent_end`, and does not continue (Pi 0.73.1,
//!    captured: `tests/streams/pi/real-0.73.1/max-tokens.jsonl`, exit 0).
//!    SharedOS, knowing only `error`, reads that as a completion whose
//!    answer is the cut text. A last assistant message stopped with `length`
//!    gives `harness_turn_max_tokens` (SharedOS's code for a turn ended by its
//!    token limit), not retryable, in `interpret` and the live reader alike.
//!
//! Tool names are read as Pi writes them: a tool served over MCP by the
//! harness's adapter (`harness/mcp/adapters/pi/sharedos-mcp.js`) is named
//! `<server>_<tool with dots as underscores>`, e.g. `sharedos_files_read`
//! and `sharedos_sharedos_escalate`, and is reported under that name.
//!
//! The result frame follows SharedOS (`{role:"toolResult", toolCallId,
//! toolName, content, isError}`). Real Pi has no input for it: a line with no
//! `type` is answered `response{success:false, error:"Unknown command: …"}`.
//! It only serves transcript columns; on a live run the catalogue reaches Pi
//! over MCP and nothing is written back.

mod event;
mod live;
mod retry;

pub use live::PiLiveReader;
pub use retry::retry_follows;

use crate::frame::{HarnessFrame, HarnessStep};
use crate::protocol::{listed_tool, HarnessFrameWriter, HarnessProtocol};
use crate::wire::{into_frame, tool_result_text};
use event::{pi_meaning, PiMeaning};
use serde_json::{json, Map, Value};
use sharedos_model::tool::{ToolDefinition, ToolResult, ToolStatus};
use std::sync::Arc;

/// The protocol id.
pub const PROTOCOL_ID: &str = "pi.rpc.jsonl";

/// Pi's RPC event stream as the eval driver reads it.
#[derive(Debug, Clone, Copy, Default)]
pub struct PiProtocol;

impl HarnessProtocol for PiProtocol {
    fn id(&self) -> &'static str {
        PROTOCOL_ID
    }

    fn describe_tools(&self, tools: &[Arc<ToolDefinition>]) -> Value {
        Value::Array(
            tools
                .iter()
                .map(|tool| {
                    let mut entry = listed_tool(tool, "parameters");
                    entry.insert("label".to_string(), Value::String(tool.name.clone()));
                    Value::Object(entry)
                })
                .collect(),
        )
    }

    fn interpret(&self, frame: &HarnessFrame) -> Vec<HarnessStep> {
        match pi_meaning(frame) {
            PiMeaning::Assistant { steps, .. } => steps,
            PiMeaning::Failure(step) => vec![step],
            PiMeaning::AgentEnd { will_retry: Some(true), .. } => Vec::new(),
            PiMeaning::AgentEnd { failure, .. } => vec![failure.unwrap_or_else(HarnessStep::bare_complete)],
            PiMeaning::Irrelevant | PiMeaning::Malformed | PiMeaning::Unknown => Vec::new(),
        }
    }

    fn encode_tool_result(&self, result: &ToolResult) -> HarnessFrame {
        into_frame(json!({
            "role": "toolResult",
            "toolCallId": result.call_id,
            "toolName": result.tool,
            "content": [{"type": "text", "text": tool_result_text(result)}],
            "isError": result.status() != ToolStatus::Succeeded,
        }))
    }
}

/// Writes assistant `message_end` and `agent_end` frames that [`PiProtocol`]
/// reads back.
#[derive(Debug, Clone, Copy, Default)]
pub struct PiWriter;

impl HarnessFrameWriter for PiWriter {
    fn protocol_id(&self) -> &'static str {
        PROTOCOL_ID
    }

    fn tool_call(&self, call_id: &str, tool: &str, arguments: &Map<String, Value>) -> HarnessFrame {
        assistant_end(json!({"type": "toolCall", "id": call_id, "name": tool, "arguments": arguments}), "toolUse")
    }

    fn message(&self, text: &str) -> HarnessFrame {
        assistant_end(json!({"type": "text", "text": text}), "stop")
    }

    fn complete(&self, _output: Option<&Value>) -> HarnessFrame {
        into_frame(json!({"type": "agent_end", "willRetry": false}))
    }

    /// The terminal `agent_end` whose last assistant message stopped on an
    /// error: one frame, as `interpret` reads a failed run (departure 1).
    fn failure(&self, message: &str) -> HarnessFrame {
        into_frame(json!({
            "type": "agent_end",
            "willRetry": false,
            "messages": [{"role": "assistant", "content": [], "stopReason": "error", "errorMessage": message}],
        }))
    }
}

fn assistant_end(block: Value, stop_reason: &str) -> HarnessFrame {
    into_frame(json!({
        "type": "message_end",
        "message": {"role": "assistant", "content": [block], "stopReason": stop_reason},
    }))
}
