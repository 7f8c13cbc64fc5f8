//! The Claude Code frame writer: stream-json frames for recorded
//! conversations, read back by [`super::ClaudeCodeProtocol`].

use super::PROTOCOL_ID;
use crate::frame::HarnessFrame;
use crate::protocol::HarnessFrameWriter;
use serde_json::{json, Map, Value};

/// Writes Claude Code `assistant` and `result` frames.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaudeCodeWriter;

impl HarnessFrameWriter for ClaudeCodeWriter {
    fn protocol_id(&self) -> &'static str {
        PROTOCOL_ID
    }

    fn tool_call(&self, call_id: &str, tool: &str, arguments: &Map<String, Value>) -> HarnessFrame {
        assistant(json!({ "type": "tool_use", "id": call_id, "name": tool, "input": arguments }))
    }

    fn message(&self, text: &str) -> HarnessFrame {
        assistant(json!({ "type": "text", "text": text }))
    }

    /// The output travels as the JSON text of `result`, so it is read back
    /// as `{text: <that JSON text>}`.
    fn complete(&self, output: Option<&Value>) -> HarnessFrame {
        let mut frame = Map::new();
        frame.insert("type".into(), json!("result"));
        frame.insert("subtype".into(), json!("success"));
        frame.insert("is_error".into(), json!(false));
        if let Some(output) = output {
            frame.insert("result".into(), Value::String(output.to_string()));
        }
        frame
    }

    /// A `result` with `is_error`, under the CLI's execution-error subtype.
    fn failure(&self, message: &str) -> HarnessFrame {
        let mut frame = Map::new();
        frame.insert("type".into(), json!("result"));
        frame.insert("subtype".into(), json!("error_during_execution"));
        frame.insert("is_error".into(), json!(true));
        frame.insert("result".into(), Value::String(message.to_string()));
        frame
    }
}

/// An assistant frame holding one block.
fn assistant(block: Value) -> HarnessFrame {
    let mut frame = Map::new();
    frame.insert("type".into(), json!("assistant"));
    frame.insert("message".into(), json!({ "role": "assistant", "content": [block] }));
    frame
}
